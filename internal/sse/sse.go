// Package sse reads and writes server-sent events, as the HTML living
// standard defines the text/event-stream format, for both ends of MCP's
// HTTP transports.
package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// The format: lines end in CRLF, LF or CR; "data" lines accumulate; "id"
// sets the last event id; "retry" a reconnection time; lines starting with
// ':' are comments; an empty line dispatches the event.

// Event is one dispatched event.
type Event struct {
	Type string // "message" when the stream named none
	Data []byte
	ID   string // the last event id after this event
}

// ErrEventTooLarge reports an event over the reader's limit; the stream can
// go on with the next event.
var ErrEventTooLarge = errors.New("event too large")

// Reader reads events from a stream.
type Reader struct {
	r   io.Reader
	buf []byte // read but not yet consumed
	max int    // limit on one event's data
	// LastID is the last event id seen; it persists across events, as the
	// standard says. Set it to go on from an earlier stream's.
	LastID string
	// Retry is the reconnection time in ms the stream set; -1 when none.
	Retry    int
	skipLF   bool // the previous line ended in CR: a leading LF belongs to it
	started  bool // past a leading byte order mark
	overSize bool // the event being read has broken the limit
	eof      bool
}

func NewReader(r io.Reader, max int) *Reader {
	if max <= 0 {
		max = 16 << 20
	}
	return &Reader{r: r, max: max, Retry: -1}
}

// Next returns the next event. At the end of the stream it returns io.EOF;
// an event cut off by the end is discarded, as the standard says.
func (r *Reader) Next() (Event, error) {
	var (
		typ  string
		data []byte
		have bool // a data field was seen
	)
	for {
		line, err := r.readLine()
		if err != nil {
			return Event{}, err
		}
		if len(line) == 0 {
			if r.overSize {
				r.overSize = false
				return Event{}, ErrEventTooLarge
			}
			if !have {
				typ = ""
				continue
			}
			if len(data) > 0 && data[len(data)-1] == '\n' {
				data = data[:len(data)-1]
			}
			if typ == "" {
				typ = "message"
			}
			return Event{Type: typ, Data: data, ID: r.LastID}, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "event":
			typ = string(value)
		case "data":
			have = true
			if r.overSize || len(data)+len(value)+1 > r.max {
				r.overSize, data = true, nil
				continue
			}
			data = append(data, value...)
			data = append(data, '\n')
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				r.LastID = string(value)
			}
		case "retry":
			if n, err := strconv.Atoi(string(value)); err == nil && n >= 0 && isDigits(value) {
				r.Retry = n
			}
		}
	}
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// readLine returns the next line without its terminator. A line longer
// than the event limit is cut short (its event is then too large), so
// memory stays bounded whatever the stream holds.
func (r *Reader) readLine() ([]byte, error) {
	cut := false
	for {
		if r.skipLF && len(r.buf) > 0 {
			r.skipLF = false
			if r.buf[0] == '\n' {
				r.buf = r.buf[1:]
			}
		}
		if !r.started && (len(r.buf) >= 3 || r.eof) {
			r.started = true
			r.buf = bytes.TrimPrefix(r.buf, []byte("\xEF\xBB\xBF"))
		}
		if i := bytes.IndexAny(r.buf, "\r\n"); i >= 0 && r.started {
			line := r.buf[:i:i]
			if r.buf[i] == '\r' {
				if i+1 < len(r.buf) {
					if r.buf[i+1] == '\n' {
						i++
					}
				} else {
					r.skipLF = true
				}
			}
			r.buf = r.buf[i+1:]
			if cut {
				r.overSize = true
			}
			return line, nil
		}
		if r.eof {
			return nil, io.EOF // a line cut off by the end: its event is incomplete
		}
		if len(r.buf) > r.max {
			r.buf, cut = r.buf[:0], true // keep memory bounded; the event is lost
		}
		if len(r.buf) == cap(r.buf) {
			grown := make([]byte, len(r.buf), max(4096, 2*cap(r.buf)))
			copy(grown, r.buf)
			r.buf = grown
		}
		n, err := r.r.Read(r.buf[len(r.buf):cap(r.buf)])
		r.buf = r.buf[:len(r.buf)+n]
		if err == io.EOF {
			r.eof = true
		} else if err != nil {
			return nil, err
		}
	}
}

// Write writes one "message" event carrying data (and id, unless empty). Data with line breaks becomes
// several data lines, so any payload round-trips.
func Write(w io.Writer, id string, data []byte) error {
	var b bytes.Buffer
	if id != "" {
		fmt.Fprintf(&b, "id: %s\n", id)
	}
	b.WriteString("event: message\n")
	for _, line := range bytes.Split(bytes.ReplaceAll(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n")), []byte("\n")) {
		b.WriteString("data: ")
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}
