package jsonrpc

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpgate/mcpgate/internal/rawjson"
)

// Error is a JSON-RPC error object. Errors compare equal under errors.Is when
// their codes match, so a code travels by wrapping:
//
//	fmt.Errorf("%w: unknown tool %q", jsonrpc.ErrInvalidParams, name)
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

func (e *Error) appendJSON(b []byte) []byte {
	b = append(b, `{"code":`...)
	b = fmt.Appendf(b, "%d", e.Code)
	b = append(b, `,"message":`...)
	b = rawjson.AppendString(b, e.Message)
	if len(e.Data) > 0 {
		b = append(b, `,"data":`...)
		b = append(b, e.Data...)
	}
	return append(b, '}')
}

// The standard error codes. Wrap them to add context; compare with errors.Is.
var (
	// ErrParse: the message is not valid JSON.
	ErrParse = &Error{Code: -32700, Message: "parse error"}
	// ErrInvalidRequest: valid JSON, but not a valid JSON-RPC message.
	ErrInvalidRequest = &Error{Code: -32600, Message: "invalid request"}
	// ErrMethodNotFound: nobody serves the method.
	ErrMethodNotFound = &Error{Code: -32601, Message: "method not found"}
	// ErrInvalidParams: the params are wrong for the method.
	ErrInvalidParams = &Error{Code: -32602, Message: "invalid params"}
	// ErrInternal: the serving side failed.
	ErrInternal = &Error{Code: -32603, Message: "internal error"}
)

// ErrClosed is returned by calls on a connection that has stopped, and is the
// error every pending call gets when the connection ends.
var ErrClosed = errors.New("connection closed")

// ErrInvalidResponse is what a call gets when the peer's answer to it
// could not be read (its id could, the rest is not valid JSON-RPC).
var ErrInvalidResponse = errors.New("invalid response")

// ToWire turns any error into the error object to send. An *Error anywhere in
// the chain keeps its code and data; the message is the whole chain's text so
// that context added by wrapping reaches the peer. Other errors are internal.
func ToWire(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		if e.Message == err.Error() {
			return e
		}
		return &Error{Code: e.Code, Message: err.Error(), Data: e.Data}
	}
	return &Error{Code: ErrInternal.Code, Message: err.Error()}
}

// Errorf makes an error with code's code and a formatted message. Unlike
// wrapping with %w, the message does not start with code's generic text.
func Errorf(code *Error, format string, args ...any) *Error {
	return &Error{Code: code.Code, Message: fmt.Sprintf(format, args...)}
}
