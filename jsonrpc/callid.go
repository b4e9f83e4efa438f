package jsonrpc

import (
	"strconv"
	"unsafe"
)

// setIntID gives the call the id n, written in the call's own digits: the
// id's string views them rather than a string of its own, so that a call
// costs one allocation, not two. The digits are written once, before the
// call is shared, and never changed: the string is as immutable as any,
// and keeps the call alive while it is used (a map key of pending).
func (call *Call) setIntID(n int64) {
	b := strconv.AppendInt(call.digits[:0], n, 10)
	call.id = ID{unsafe.String(unsafe.SliceData(b), len(b))}
}
