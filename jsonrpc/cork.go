package jsonrpc

// Fewer writes than messages. A reader whose one read of the peer brought
// several messages relays each on the goroutine that read it (see
// Options.Inline, Call.Then); written one by one, each costs a system call
// and wakes the process on the other end. Instead, what the reader writes
// while it works through what it has read may wait in its destination's
// queue, and every destination that holds some is flushed in one write
// before the reader reads again: before it could wait for the peer, never
// later. A relay that copies lines as they come writes once per message.

// Cork gathers the writes one reader goroutine makes between two reads of
// its peer (see above). It belongs to that goroutine: it is handed to what
// runs there (Options.Inline, Completion.Completed) and must not be kept
// or used elsewhere. A nil *Cork gathers nothing: write at once.
type Cork struct {
	held []CorkHolder // destinations to flush; in the order they were held
}

// CorkHolder is a destination that holds writes for a Cork: it is flushed,
// once, on the cork's goroutine, before that goroutine reads again or
// does anything that might wait. Flush must not wait either: what cannot
// be written at once goes to whoever writes for it when the peer has room.
type CorkHolder interface {
	FlushCork()
}

// Hold has h flushed when the cork is. Nil-safe: a nil cork holds nothing,
// and then h must not hold anything for it.
func (k *Cork) Hold(h CorkHolder) {
	if k == nil {
		return
	}
	k.held = append(k.held, h)
}

// Flush flushes every destination held, in order: only the cork's
// goroutine calls it (Conn's reader does before it reads). Nil-safe.
func (k *Cork) Flush() {
	if k == nil {
		return
	}
	for i, h := range k.held {
		h.FlushCork()
		k.held[i] = nil
	}
	k.held = k.held[:0]
}

// ReadAheadStream is implemented by streams whose Read may return messages
// that one read of the peer brought together, and that can tell when Read
// is about to read the peer again (and may wait): Conn then gathers its
// reader's writes until then (see Cork).
type ReadAheadStream interface {
	// BeforeRead has f called, on the reading goroutine, before each read
	// of the peer, and reports whether it will be (a wrapper's inner
	// stream may not say). Called once, before the first Read.
	BeforeRead(f func()) bool
}

// BeforeRead has f called before the line reader reads its peer again.
func (s *lineStream) BeforeRead(f func()) bool {
	s.r.beforeRead = f
	return true
}

// TryLinesWriter is implemented by streams that can write several
// messages in one write without waiting, when the peer has room now.
type TryLinesWriter interface {
	// TryWriteLines writes msgs, in order, each as a line, in one write if
	// it can without waiting. whole is how many went out whole; when the
	// next went out only in part, rest is what remains of its wire form,
	// which must be given to WriteRest (see TryWriter) before anything else
	// is written. Nothing was written when whole is 0 and rest nil.
	TryWriteLines(msgs [][]byte) (whole int, rest []byte, err error)
}

// Completion is told that a call is done (see Call.Then).
type Completion interface {
	// Completed runs on the goroutine that completed the call, once Done
	// is closed; cork, if not nil, is that goroutine's (see Cork). It must
	// not block.
	Completed(cork *Cork)
}
