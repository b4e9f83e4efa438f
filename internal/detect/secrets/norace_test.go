//go:build !race

package secrets

// raceEnabled: the tests run under the race detector (see race_test.go).
const raceEnabled = false
