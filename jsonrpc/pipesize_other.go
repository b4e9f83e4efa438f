//go:build !linux

package jsonrpc

// growPipe: pipes keep the size they have here (see pipesize_linux.go).
func growPipe(any) {}
