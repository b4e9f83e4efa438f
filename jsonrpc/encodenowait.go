package jsonrpc

// NoWaitEncoder is a NoWaitWriter that encodes a message itself, into
// memory of its own that it reuses once what it holds is written: every
// request and answer that goes out without waiting then costs no
// allocation for its wire form. The message is passed by value, so that a
// caller's stays on its stack.
type NoWaitEncoder interface {
	// EncodeNoWait is WriteNoWait of m's wire form (see Message.Encode).
	EncodeNoWait(m Message, related ID, final bool, cork *Cork) (taken bool, err error)
}

// writeMessageNoWait hands m to nw without waiting, encoded by nw when it
// can (NoWaitEncoder), else here.
func writeMessageNoWait(nw NoWaitWriter, m *Message, related ID, final bool, cork *Cork) (bool, error) {
	if enc, ok := nw.(NoWaitEncoder); ok {
		return enc.EncodeNoWait(*m, related, final, cork)
	}
	return nw.WriteNoWait(m.Encode(), related, final, cork)
}

// ReuseSafeWriter is implemented by streams that keep nothing of a message
// once the call that writes it (Write, WriteLines, TryWrite, TryWriteLines,
// WriteRest) returns: what they do not write then, they copy. Whoever
// wrote the message may reuse its memory (see NoWaitEncoder). A stream
// that hands a message on to be written later (an HTTP stream) must not
// implement it.
type ReuseSafeWriter interface {
	KeepsNothingWritten() bool
}

// KeepsNothingWritten: a line stream copies a message into its write
// buffer, or writes it, before returning.
func (s *lineStream) KeepsNothingWritten() bool { return true }
