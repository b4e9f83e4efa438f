//go:build race

package httpfront

// Under -race, sync.Pool drops a quarter of what is put back.
func maxModernCallAllocs() float64 { return 134 }
