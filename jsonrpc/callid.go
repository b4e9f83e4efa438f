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

// keptIDBytes is the longest id a kept request holds in its own bytes:
// a number, or a short string (a client's counter, "req-17"). 16 keeps
// the request in the allocation size class it had without them (384).
const keptIDBytes = 16

// ownID returns id viewing the request's own copy of its text, made as
// setIntID makes a call's: written once, before the request is shared,
// and never changed, so one allocation a request less. A longer id gets
// a string of its own.
func (kept *keptRequest) ownID(id ID) ID {
	if len(id.raw) > len(kept.idText) {
		return id.owned()
	}
	n := copy(kept.idText[:], id.raw)
	return ID{unsafe.String(unsafe.SliceData(kept.idText[:n]), n)}
}
