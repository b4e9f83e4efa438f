//go:build !unix

package main

import (
	"io"
	"os"
)

func pollable(f *os.File, name string) io.ReadWriter { return f }
