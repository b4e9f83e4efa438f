package auditchain

import (
	"encoding/json"
	"time"
)

// HeaderEvent is the "event" of a header record.
const HeaderEvent = "audit_file"

// Header is the first record of every file. Its line's prev is the hash of
// the last line of the file before it: that link is how Verify puts a
// series of files in order, whatever order they are given in.
type Header struct {
	Time  time.Time `json:"time"` // when the file was started (UTC)
	Event string    `json:"event"`
	Host  string    `json:"host"`
	PID   int       `json:"pid"`
	// PreviousFile is the name (without directory) the file before it was
	// rotated to; empty when this file continues no file of this writer's
	// (the first file, or a file that was not a chain moved aside).
	PreviousFile string `json:"previous_file,omitempty"`
	// Replica names the mcpgate replica whose chain this is, when several
	// write chains of their own (see VerifyChains).
	Replica string `json:"replica,omitempty"`
}

// TimeFormat is how records name the time: RFC 3339 in UTC, nanoseconds.
const TimeFormat = time.RFC3339Nano

func (h Header) record() []byte {
	b, err := json.Marshal(struct {
		Time         string `json:"time"`
		Event        string `json:"event"`
		Host         string `json:"host"`
		PID          int    `json:"pid"`
		PreviousFile string `json:"previous_file,omitempty"`
		Replica      string `json:"replica,omitempty"`
	}{h.Time.UTC().Format(TimeFormat), HeaderEvent, h.Host, h.PID, h.PreviousFile, h.Replica})
	if err != nil {
		panic(err) // strings and an int
	}
	return b
}

// parseHeader reads line as a header record; false if it is not one.
func parseHeader(line []byte) (Header, bool) {
	if _, ok := Prev(line); !ok {
		return Header{}, false
	}
	var h Header
	if json.Unmarshal(line, &h) != nil || h.Event != HeaderEvent {
		return Header{}, false
	}
	return h, true
}
