//go:build race

package httpfront

// Under -race, sync.Pool drops a quarter of what is put back, and the
// timers it keeps are made again now and then.
func maxModernCallAllocs() float64 { return 206 }
