package proxy

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"sync/atomic"
)

// A stateless request's session (a modern request over HTTP) is named in
// the audit trail and the logs only, never to a client, which has nothing
// to guess it for: its name is unique, not secret. It is this process's
// 64 random bits and a count, the same 32 hex digits as a session's id,
// without a read of the system's random source on every request (a
// system call, and a tenth of such a request's setup).

var (
	statelessPrefix = func() (p [8]byte) {
		rand.Read(p[:])
		return p
	}()
	statelessCount atomic.Uint64
)

// newStatelessID names one stateless request's session.
func newStatelessID() string {
	var b [16]byte
	copy(b[:8], statelessPrefix[:])
	binary.BigEndian.PutUint64(b[8:], statelessCount.Add(1))
	var digits [32]byte // on the stack: hex.EncodeToString allocates its own
	hex.Encode(digits[:], b[:])
	return string(digits[:])
}
