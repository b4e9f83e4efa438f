package jsonrpc

// A line of megabytes (a tool's big result) is read in pieces while the
// peer writes it, and most of that time the reading goroutine waits. Its
// owner may have work to do on the line that can start before it is whole
// (decoding its strings, scanning them): a LineWatcher is told each piece
// as it comes, so that once the newline is in, little is left to do.

// LineWatcher watches one long line of a line stream while it is read.
// Its methods run on the stream's reading goroutine, between reads: what
// they take delays the next read, not the peer (which writes into the
// pipe meanwhile).
type LineWatcher interface {
	// Piece is told the line so far, each time more of it has come. Each
	// call's line begins with the bytes of the previous one, in the same
	// memory: the buffer the line is read into, which Read returns. The
	// watcher may keep it (read only) after the call.
	Piece(line []byte)
	// Done is told the whole line, without its newline, in the memory the
	// pieces were in (Read returns it, or a part of it trimmed of
	// spaces); or nil when the line will not be returned so: over the
	// size limit, cut by a read error, or gone on into other memory
	// (a line longer than its buffer, see readLong). It is called once,
	// and no Piece follows.
	Done(line []byte)
}

// LineWatchStream is implemented by streams that can have their long
// lines watched as they are read.
type LineWatchStream interface {
	// WatchLongLines has start called, on the reading goroutine, when a
	// line longer than the read buffer begins, with its first bytes (the
	// watcher's first piece): the LineWatcher it returns is told the
	// rest, and nil watches nothing. Lines that fit in the read buffer
	// are not watched: they come whole in one read. Call it before the
	// first Read; it reports whether lines will be watched.
	WatchLongLines(start func(first []byte) LineWatcher) bool
}

// WatchLongLines has start called, on the reading goroutine, when a long
// line begins (see LineWatchStream).
func (s *lineStream) WatchLongLines(start func(first []byte) LineWatcher) bool {
	s.r.watch = start
	return true
}
