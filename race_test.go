//go:build race

package main

// raceEnabled: the tests run under the race detector, which multiplies
// memory use (the [race] condition of the scripts).
const raceEnabled = true
