// Package jsonrpc implements JSON-RPC 2.0: the wire format, stream framing and a
// symmetric connection that both sends and serves requests.
//
// Nothing here knows about MCP. Ids are kept byte-exact, params and results stay
// raw JSON, and the envelope is decoded strictly so that a message is read here
// exactly as the peer on the other side of a proxy will read it.
//
// Data flows from a [Stream] (one message per Read) into a [Conn], which
// dispatches requests to a [Handler] concurrently and matches responses to the
// calls it made.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unsafe"

	"github.com/mcpgate/mcpgate/internal/rawjson"
)

// jsonrpcVersion is the only JSON-RPC version this package speaks.
const jsonrpcVersion = "2.0"

// ID is a request id exactly as it appeared on the wire: the raw JSON text of a
// string or a number. "7" and 7 are different ids. The zero ID means "no id".
type ID struct{ raw string }

// IntID returns the id for the number n.
func IntID(n int64) ID { return ID{strconv.FormatInt(n, 10)} }

// StringID returns the id for the string s.
func StringID(s string) ID {
	b, _ := json.Marshal(s)
	return ID{string(b)}
}

// ParseID reads an id from raw JSON. Only strings and numbers are ids.
func ParseID(raw json.RawMessage) (ID, error) {
	raw = bytes.TrimSpace(raw)
	if _, err := parseIDView(raw); err != nil {
		return ID{}, err
	}
	return ID{string(raw)}, nil
}

// parseIDView is ParseID with the id viewing raw's bytes, not a copy: for
// a message whose bytes are kept unchanged as long as its id is used (see
// decode).
func parseIDView(raw json.RawMessage) (ID, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ID{}, errors.New("missing id")
	}
	c := raw[0]
	if c != '"' && c != '-' && (c < '0' || c > '9') {
		return ID{}, fmt.Errorf("id must be a string or a number, not %s", raw)
	}
	if !rawjson.Valid(raw) {
		// Say what is wrong with it, as encoding/json words it.
		var v any
		err := json.Unmarshal(raw, &v)
		if err == nil {
			err = errors.New("not a string or a number")
		}
		return ID{}, fmt.Errorf("id: %v", err)
	}
	return ID{unsafe.String(unsafe.SliceData(raw), len(raw))}, nil
}

// owned is id in a string of its own, not viewing the bytes it was read
// from (see parseIDView).
func (id ID) owned() ID { return ID{strings.Clone(id.raw)} }

// IsValid reports whether the id is present.
func (id ID) IsValid() bool { return id.raw != "" }

// String returns the raw JSON text of the id.
func (id ID) String() string { return id.raw }

// MarshalJSON writes the id byte-exact; the zero ID is null.
func (id ID) MarshalJSON() ([]byte, error) {
	if id.raw == "" {
		return []byte("null"), nil
	}
	return []byte(id.raw), nil
}

// UnmarshalJSON accepts a string or a number.
func (id *ID) UnmarshalJSON(b []byte) error {
	v, err := ParseID(b)
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// Message is any JSON-RPC message. Which kind it is follows from its fields:
// a request has a Method and an ID, a notification a Method and no ID, a
// response an ID (or, for an unreadable request, none) and a Result or Error.
type Message struct {
	ID     ID
	Method string
	Params json.RawMessage // nil when absent
	Result json.RawMessage // set on a successful response
	Error  *Error          // set on an error response

	// Size is how many bytes the message took on the wire (0 if built locally).
	Size int

	// split is Params split into members by Decode, in the pass that
	// validated the message; nil when Params is not an object (or has a
	// duplicate key, for its reader to report).
	split rawjson.MemberList
	// splitOf is the Params that split belongs to: a caller may replace
	// Params after decoding.
	splitOf json.RawMessage
}

// ParamMembers returns the members of Params as Decode split them, so that
// whoever serves a request does not split its params a second time. ok is
// false when they are not at hand (m was built locally, Params was
// replaced, is not an object, or has a duplicate key): then split Params
// yourself.
func (m *Message) ParamMembers() (members rawjson.MemberList, ok bool) {
	if m.split == nil || len(m.Params) != len(m.splitOf) || len(m.Params) == 0 || &m.Params[0] != &m.splitOf[0] {
		return nil, false
	}
	return m.split, true
}

// IsRequest reports whether m is a request (expects a response).
func (m *Message) IsRequest() bool { return m.Method != "" && m.ID.IsValid() }

// IsNotification reports whether m is a notification.
func (m *Message) IsNotification() bool { return m.Method != "" && !m.ID.IsValid() }

// IsResponse reports whether m answers a request.
func (m *Message) IsResponse() bool { return m.Method == "" }

// Encode returns the wire form of m. Absent fields are omitted, never null.
func (m *Message) Encode() []byte {
	return m.AppendEncoded(make([]byte, 0, m.EncodedSizeHint()))
}

// EncodedSizeHint is about how many bytes m's wire form takes: short only
// by the escapes a method or an error's text may need. The id and an
// error count, as a peer chooses them: a caller that sizes memory by the
// hint (proxy's outbox arena) must not be told a megabyte's error is small.
func (m *Message) EncodedSizeHint() int {
	n := 64 + len(m.ID.raw) + len(m.Method) + len(m.Params) + len(m.Result)
	if m.Error != nil {
		n += len(m.Error.Message) + len(m.Error.Data)
	}
	return n
}

// AppendEncoded appends the wire form of m (see Encode) to b.
func (m *Message) AppendEncoded(b []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0"`...)
	if m.ID.IsValid() || (m.IsResponse() && m.Error != nil) {
		b = append(b, `,"id":`...)
		id, _ := m.ID.MarshalJSON()
		b = append(b, id...)
	}
	if m.Method != "" {
		b = append(b, `,"method":`...)
		b = rawjson.AppendString(b, m.Method)
		if len(m.Params) > 0 {
			b = append(b, `,"params":`...)
			b = append(b, m.Params...)
		}
	} else if m.Error != nil {
		b = append(b, `,"error":`...)
		b = m.Error.appendJSON(b)
	} else {
		b = append(b, `,"result":`...)
		if len(m.Result) == 0 {
			b = append(b, "{}"...)
		} else {
			b = append(b, m.Result...)
		}
	}
	return append(b, '}')
}

// resultParts is the wire form of a successful response in three parts:
// the envelope up to the result, the result's own bytes (not copied), and
// the closing brace.
func (m *Message) resultParts() [][]byte {
	head := make([]byte, 0, 32+len(m.ID.raw))
	head = append(head, `{"jsonrpc":"2.0","id":`...)
	head = append(head, m.ID.raw...)
	head = append(head, `,"result":`...)
	return [][]byte{head, m.Result, closeBrace}
}

var closeBrace = []byte{'}'}

// ResultParts is resultParts for a transport that writes a big result
// itself, in parts, rather than copying it into an encoded message.
func (m *Message) ResultParts() [][]byte { return m.resultParts() }

// decodeMethod returns the string raw stands for: last's, when it is the
// same (raw has no escape, so its bytes are the string's), else a new one,
// which last then holds. last may be nil.
func decodeMethod(raw []byte, last *string) string {
	if last != nil && len(raw) == len(*last)+2 && string(raw[1:len(raw)-1]) == *last && bytes.IndexByte(raw, '\\') < 0 {
		return *last
	}
	if last == nil && len(raw) >= 2 {
		// A decoder with no last method (one per HTTP request) would
		// make the same few strings again and again.
		if s, ok := commonMethod(raw[1 : len(raw)-1]); ok {
			return s
		}
	}
	s, _ := rawjson.Unquote(raw)
	if last != nil {
		*last = s
	}
	return s
}

// commonMethod returns the method named by unescaped, the bytes between a
// method's quotes, when it is one that most requests name; ok is false for
// any other, and for one written with escapes (no case has a backslash).
func commonMethod(unescaped []byte) (method string, ok bool) {
	switch string(unescaped) {
	case "tools/call":
		return "tools/call", true
	case "tools/list":
		return "tools/list", true
	case "notifications/cancelled":
		return "notifications/cancelled", true
	case "notifications/progress":
		return "notifications/progress", true
	case "ping":
		return "ping", true
	case "resources/read":
		return "resources/read", true
	case "prompts/get":
		return "prompts/get", true
	}
	return "", false
}

// errNullID marks a request whose id is null: it is answered, with a null id.
var errNullID = fmt.Errorf("%w: a request id must not be null", ErrInvalidRequest)

// Decode reads one message, strictly: the top level must be an object whose
// keys are exactly those of JSON-RPC 2.0, each at most once. encoding/json
// alone would accept "ID" for "id" and keep the last of two "method" keys, so a
// proxy could read a message differently from the peer behind it.
//
// On failure the error is an *Error (ParseError or InvalidRequest) and the
// returned message, if not nil, carries the id when one could be read, so that
// the error can still be answered to the right request.
func Decode(data []byte) (*Message, error) {
	return decode(data, nil, nil, nil, nil)
}

// decode is Decode into m, when not nil, with the envelope's members split
// into top's array (see rawjson.MembersNestedIntoBoth), when not nil, and its
// params' into params' array: a reader that decodes message after message
// reuses them, and copies the params' split of a message it keeps (see
// Conn.keep).
// method, when not nil, is the last method decoded: the same one again is
// not made again (a string a request). Decoded in place (m not nil), the
// id views data: an answer's is used only to find its call, and the
// reader gives whatever it keeps an id of its own (see Conn.dispatch).
func decode(data []byte, m *Message, top, params rawjson.MemberList, method *string) (*Message, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		if len(data) > 0 && data[0] == '[' {
			return nil, fmt.Errorf("%w: batch where one message was expected", ErrInvalidRequest)
		}
		if !json.Valid(data) {
			return nil, fmt.Errorf("%w: not JSON", ErrParse)
		}
		return nil, fmt.Errorf("%w: message must be a JSON object", ErrInvalidRequest)
	}
	members, split, err := rawjson.MembersNestedIntoBoth(top, params, data, "params")
	inPlace := m != nil
	if m == nil {
		m = new(Message)
	}
	*m = Message{Size: len(data)}
	if id, ok := members.Get("id"); ok {
		parse := ParseID
		if inPlace {
			parse = parseIDView
		}
		if parsed, err := parse(id); err == nil {
			m.ID = parsed
		}
	}
	if err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = errors.New("the message ends before its JSON does")
		}
		return m, fmt.Errorf("%w: %v", ErrParse, err)
	}
	var version, hasID bool
	for _, mem := range members {
		switch mem.Key {
		case "jsonrpc":
			if string(mem.Value) == `"`+jsonrpcVersion+`"` {
				version = true // as written by everyone: no string made to compare
				continue
			}
			if v, err := rawjson.Unquote(mem.Value); err != nil || v != jsonrpcVersion {
				return m, fmt.Errorf(`%w: "jsonrpc" must be "2.0"`, ErrInvalidRequest)
			}
			version = true
		case "id":
			hasID = true
			if bytes.Equal(mem.Value, []byte("null")) {
				continue
			}
			if !m.ID.IsValid() {
				_, perr := ParseID(mem.Value)
				return m, fmt.Errorf("%w: %v", ErrInvalidRequest, perr)
			}
		case "method":
			if mem.Value[0] == '"' {
				m.Method = decodeMethod(mem.Value, method)
			}
			if m.Method == "" {
				return m, fmt.Errorf(`%w: "method" must be a non-empty string`, ErrInvalidRequest)
			}
		case "params":
			if c := mem.Value[0]; c != '{' && c != '[' {
				return m, fmt.Errorf(`%w: "params" must be an object or an array`, ErrInvalidRequest)
			}
			m.Params = mem.Value
			m.split, m.splitOf = split, mem.Value
		case "result":
			m.Result = mem.Value
		case "error":
			var e Error
			if err := json.Unmarshal(mem.Value, &e); err != nil {
				return m, fmt.Errorf(`%w: "error": %v`, ErrInvalidRequest, err)
			}
			m.Error = &e
		default:
			return m, fmt.Errorf("%w: unknown member %q", ErrInvalidRequest, mem.Key)
		}
	}
	switch {
	case !version:
		return m, fmt.Errorf(`%w: missing "jsonrpc":"2.0"`, ErrInvalidRequest)
	case m.Method != "":
		if m.Result != nil || m.Error != nil {
			return m, fmt.Errorf(`%w: a request cannot carry "result" or "error"`, ErrInvalidRequest)
		}
		if hasID && !m.ID.IsValid() {
			return m, errNullID
		}
	case (m.Result == nil) == (m.Error == nil):
		return m, fmt.Errorf(`%w: a response needs exactly one of "result" and "error"`, ErrInvalidRequest)
	case !hasID:
		return m, fmt.Errorf("%w: a response needs an id", ErrInvalidRequest)
	}
	return m, nil
}
