//go:build !unix

package main

func fdLimit() uint64 { return 0 }
