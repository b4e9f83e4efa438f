package jsonrpc

import (
	"bytes"
	"context"
	"fmt"
	"io"
)

// Stream carries whole messages. Read is called by one goroutine at a time
// (the connection's reader); Write may be called concurrently and must write
// each message whole. Close unblocks a pending Read.
type Stream interface {
	// Read returns the next message's bytes, or io.EOF when the peer is done.
	// A message that breaks a limit is reported as a *TooLargeError and the
	// stream stays usable.
	Read() ([]byte, error)
	// Write sends one message. ctx bounds how long it may wait for its turn
	// (another write in progress, room in a queue): when it ends first,
	// nothing is sent and Write returns ctx's error. A message once taken is
	// written whole, never cut: a peer must not see half a message.
	Write(ctx context.Context, msg []byte) error
	Close() error
}

// RelatedWriter is implemented by streams that route a message by the
// incoming request it belongs to: in MCP's Streamable HTTP, the answer to a
// POST, and what precedes it, go back on that POST's response. final marks
// the response to related itself, after which nothing more belongs to it;
// a final call with a nil msg says the request ended with no answer (the
// peer cancelled it).
type RelatedWriter interface {
	WriteRelated(ctx context.Context, msg []byte, related ID, final bool) error
}

// MessageReader is implemented by streams that decode what they read (an
// HTTP server decodes each POST to route it): Conn then reads with
// ReadMessage instead of Read, and does not decode again. A message comes
// back as msg; data that is not one valid message (a batch, or input that
// did not decode) comes back as raw, to be dispatched as Read's would be.
type MessageReader interface {
	ReadMessage() (msg *Message, raw []byte, err error)
}

// DefaultMaxMessage is the default limit on one incoming message.
const DefaultMaxMessage = 16 << 20

// prefixKeep is how much of an over-size message is kept: enough to find the
// id of any sensibly built request.
const prefixKeep = 64 << 10

// TooLargeError reports an incoming message over the size limit. Prefix holds
// its start, from which the request id can often still be read.
type TooLargeError struct {
	Size   int // bytes seen before the message ended
	Limit  int
	Prefix []byte
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes", e.Size, e.Limit)
}

// PartsWriter is implemented by streams that write one message given in
// parts, in order, without joining them: a response whose result is many
// megabytes goes out as its envelope's head, the result's own bytes and
// the closing brace, and the result is never copied. related and final
// are as in RelatedWriter. Conn uses it for big results only; a stream
// without it gets the message joined.
type PartsWriter interface {
	WriteParts(ctx context.Context, parts [][]byte, related ID, final bool) error
}

// TryWriter is implemented by streams that can write a message without
// waiting, when the peer has room for it now (a pipe to a child process):
// the message goes out on the caller's goroutine, with no handoff to a
// writer goroutine. The caller is the stream's only writer.
type TryWriter interface {
	// TryWrite writes msg if it can without waiting. written is false
	// when nothing was written (the peer has no room, or another write is
	// under way): write msg later as usual. When only a part went out,
	// rest is what remains of its wire form, which must be given to
	// WriteRest before anything else is written: a message is never cut.
	TryWrite(msg []byte) (written bool, rest []byte, err error)
	// WriteRest writes what TryWrite left of a message, waiting as Write
	// does.
	WriteRest(ctx context.Context, rest []byte) error
}

// LinesWriter is implemented by streams that can write several messages
// at once, in order, each whole: answers that pile up behind a write then
// cost one write, not one each.
type LinesWriter interface {
	WriteLines(ctx context.Context, msgs [][]byte) error
}

// lineStream frames messages as lines: the stdio transport of MCP.
type lineStream struct {
	r      *lineReader
	max    int
	turn   chan struct{} // 1-buffered: holds a token while someone writes
	w      io.Writer
	closer io.Closer
	wbuf   []byte             // what is being written with its newline; held with turn
	raw    *nonblockingWriter // w's file when writes to it can be tried without waiting; nil otherwise
	grown  bool               // w's pipe was raised for big messages (growPipe); held with turn
}

// growPipeAt is the size of a message for which a stream's pipe is raised
// (see growPipe).
const growPipeAt = 1 << 20

// NewLineStream frames one message per line over r and w. max limits one
// incoming line (0 means DefaultMaxMessage). closer, if not nil, is closed by
// Close.
func NewLineStream(r io.Reader, w io.Writer, closer io.Closer, max int) Stream {
	if max <= 0 {
		max = DefaultMaxMessage
	}
	return &lineStream{r: newLineReader(r, max), w: w, closer: closer, max: max, turn: make(chan struct{}, 1), raw: nonblocking(w)}
}

// Read returns each line in a buffer of its own, which the message decoded
// from it keeps (params and results are slices of it): nothing is copied
// again on the way through the gateway.
func (s *lineStream) Read() ([]byte, error) {
	for {
		line, err := s.r.readLine()
		if tl, ok := err.(*TooLargeError); ok {
			return nil, tl
		}
		if err != nil && (err != io.EOF || len(line) == 0) {
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			if err == io.EOF {
				return nil, io.EOF
			}
			continue // blank lines are allowed between messages
		}
		return line, nil
	}
}

// maxKeptWriteBuffer bounds the write buffer kept between messages: a big
// message's is not pinned.
const maxKeptWriteBuffer = 64 << 10

func (s *lineStream) Write(ctx context.Context, msg []byte) error {
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.turn }()
	if len(msg) >= maxKeptWriteBuffer {
		// Copying it to add the newline would cost more than a second write.
		return s.writeAll(msg, newline)
	}
	s.wbuf = append(append(s.wbuf[:0], msg...), '\n')
	_, err := s.w.Write(s.wbuf)
	return err
}

var newline = []byte{'\n'}

// WriteLines writes msgs as lines, in one write when they fit in the write
// buffer.
func (s *lineStream) WriteLines(ctx context.Context, msgs [][]byte) error {
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.turn }()
	s.wbuf = s.wbuf[:0]
	for _, m := range msgs {
		if len(s.wbuf)+len(m)+1 > maxKeptWriteBuffer && len(s.wbuf) > 0 {
			if _, err := s.w.Write(s.wbuf); err != nil {
				return err
			}
			s.wbuf = s.wbuf[:0]
		}
		if len(m) >= maxKeptWriteBuffer {
			if err := s.writeAll(m, newline); err != nil {
				return err
			}
			continue
		}
		s.wbuf = append(append(s.wbuf, m...), '\n')
	}
	if len(s.wbuf) > 0 {
		_, err := s.w.Write(s.wbuf)
		return err
	}
	return nil
}

// WriteParts writes the parts as one line, under one turn.
func (s *lineStream) WriteParts(ctx context.Context, parts [][]byte, _ ID, _ bool) error {
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.turn }()
	return s.writeAll(append(parts, newline)...)
}

// writeAll writes the parts in order; the caller holds the turn. Small
// parts are gathered into one write.
func (s *lineStream) writeAll(parts ...[]byte) error {
	s.wbuf = s.wbuf[:0]
	for _, p := range parts {
		if len(p) < maxKeptWriteBuffer && len(s.wbuf)+len(p) <= maxKeptWriteBuffer {
			s.wbuf = append(s.wbuf, p...)
			continue
		}
		if len(s.wbuf) > 0 {
			if _, err := s.w.Write(s.wbuf); err != nil {
				return err
			}
			s.wbuf = s.wbuf[:0]
		}
		if len(p) >= growPipeAt && !s.grown {
			s.grown = true
			growPipe(s.w)
		}
		if _, err := s.w.Write(p); err != nil {
			return err
		}
	}
	if len(s.wbuf) > 0 {
		_, err := s.w.Write(s.wbuf)
		return err
	}
	return nil
}

// TryWrite writes msg and its newline in one non-blocking write, when w is
// a non-blocking pipe and msg is small (a big one is better left to a
// writer that can wait).
func (s *lineStream) TryWrite(msg []byte) (bool, []byte, error) {
	if s.raw == nil || len(msg) >= maxKeptWriteBuffer {
		return false, nil, nil
	}
	select {
	case s.turn <- struct{}{}:
	default:
		return false, nil, nil
	}
	defer func() { <-s.turn }()
	s.wbuf = append(append(s.wbuf[:0], msg...), '\n')
	n, _ := s.raw.tryWrite(s.wbuf)
	switch {
	case n == len(s.wbuf):
		return true, nil, nil
	case n > 0:
		return true, bytes.Clone(s.wbuf[n:]), nil
	}
	// No room, or the attempt failed: written as usual instead, by a
	// writer that can wait, and sees (and reports) an error itself.
	return false, nil, nil
}

// WriteRest writes the rest of a message that TryWrite began.
func (s *lineStream) WriteRest(ctx context.Context, rest []byte) error {
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.turn }()
	_, err := s.w.Write(rest)
	return err
}

func (s *lineStream) Close() error {
	if s.closer != nil {
		return s.closer.Close()
	}
	return nil
}
