//go:build !race

package injection

// raceEnabled: the tests run under the race detector (see race_test.go).
const raceEnabled = false
