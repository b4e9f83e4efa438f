//go:build !unix

package main

// writableWarning: Windows reports made-up permission bits, so there is
// nothing to check.
func writableWarning(string) string { return "" }
