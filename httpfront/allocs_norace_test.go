//go:build !race

package httpfront

func maxModernCallAllocs() float64 { return 120 }
