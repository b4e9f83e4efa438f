package jsonrpc

import (
	"bufio"
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

// lineStream frames messages as lines: the stdio transport of MCP.
type lineStream struct {
	r      *bufio.Reader
	max    int
	turn   chan struct{} // 1-buffered: holds a token while someone writes
	w      io.Writer
	closer io.Closer
	buf    []byte
}

// NewLineStream frames one message per line over r and w. max limits one
// incoming line (0 means DefaultMaxMessage). closer, if not nil, is closed by
// Close.
func NewLineStream(r io.Reader, w io.Writer, closer io.Closer, max int) Stream {
	if max <= 0 {
		max = DefaultMaxMessage
	}
	return &lineStream{r: bufio.NewReaderSize(r, 64<<10), w: w, closer: closer, max: max, turn: make(chan struct{}, 1)}
}

func (s *lineStream) Read() ([]byte, error) {
	for {
		line, err := readLine(s.r, s.max, s.buf[:0])
		if tl, ok := err.(*TooLargeError); ok {
			return nil, tl
		}
		if err != nil && (err != io.EOF || len(line) == 0) {
			return nil, err
		}
		s.buf = line[:0]
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			if err == io.EOF {
				return nil, io.EOF
			}
			continue // blank lines are allowed between messages
		}
		if cap(s.buf) > 1<<20 {
			s.buf = nil // don't pin one huge message's buffer forever
		}
		return bytes.Clone(line), nil
	}
}

// readLine reads up to '\n' without bufio.Scanner's fixed token limit. Past
// max bytes it keeps a prefix, discards the rest of the line and reports
// *TooLargeError, so one bad message does not end the stream.
func readLine(r *bufio.Reader, limit int, buf []byte) ([]byte, error) {
	size := 0 // bytes of the line so far, without its newline
	over := false
	for {
		chunk, err := r.ReadSlice('\n')
		if err == nil {
			chunk = chunk[:len(chunk)-1]
		}
		size += len(chunk)
		if !over && size > limit {
			over = true
			keep := min(prefixKeep, limit)
			buf = append(buf, chunk[:max(0, min(len(chunk), keep-len(buf)))]...)
		} else if !over {
			buf = append(buf, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if over {
			return nil, &TooLargeError{Size: size, Limit: limit, Prefix: buf}
		}
		if err == nil {
			return buf, nil
		}
		return buf, err
	}
}

func (s *lineStream) Write(ctx context.Context, msg []byte) error {
	line := make([]byte, len(msg)+1)
	copy(line, msg)
	line[len(msg)] = '\n'
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.turn }()
	_, err := s.w.Write(line)
	return err
}

func (s *lineStream) Close() error {
	if s.closer != nil {
		return s.closer.Close()
	}
	return nil
}
