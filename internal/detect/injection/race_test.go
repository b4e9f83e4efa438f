//go:build race

package injection

// raceEnabled: the tests run under the race detector, whose sync.Pool
// drops a quarter of what is put back (regexp's machines among it).
const raceEnabled = true
