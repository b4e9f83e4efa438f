//go:build !race

package main

// raceEnabled: the tests run under the race detector (see race_test.go).
const raceEnabled = false
