//go:build race

package secrets

// raceEnabled: the tests run under the race detector, whose runtime keeps
// more on the heap beside what the package holds.
const raceEnabled = true
