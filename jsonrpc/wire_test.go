package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/mcpgate/mcpgate/internal/rawjson"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		in      string
		kind    string // request, notification, response, or the error code
		id      string // raw id expected, even on error
		method  string
		wantErr *Error
	}{
		{in: `{"jsonrpc":"2.0","id":7,"method":"ping"}`, kind: "request", id: `7`, method: "ping"},
		{in: `{"jsonrpc":"2.0","id":"7","method":"ping"}`, kind: "request", id: `"7"`, method: "ping"},
		{in: `{"jsonrpc":"2.0","id":1.50,"method":"ping"}`, kind: "request", id: `1.50`, method: "ping"},
		{in: `{"jsonrpc":"2.0","id":"\u0041","method":"ping"}`, kind: "request", id: `"\u0041"`, method: "ping"},
		{in: ` {"method":"notifications/x","jsonrpc":"2.0","params":{}} `, kind: "notification", method: "notifications/x"},
		{in: `{"jsonrpc":"2.0","id":3,"result":{}}`, kind: "response", id: `3`},
		{in: `{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"x"}}`, kind: "response", id: `3`},
		{in: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, kind: "response"},

		{in: `{"jsonrpc":"2.0","id":null,"method":"ping"}`, wantErr: ErrInvalidRequest},
		{in: `{"jsonrpc":"2.0","ID":1,"id":2,"method":"ping"}`, id: `2`, wantErr: ErrInvalidRequest},
		{in: `{"jsonrpc":"2.0","id":2,"method":"ping","method":"other"}`, id: `2`, wantErr: ErrParse},
		{in: `{"jsonrpc":"1.0","id":4,"method":"ping"}`, id: `4`, wantErr: ErrInvalidRequest},
		{in: `{"id":4,"method":"ping"}`, id: `4`, wantErr: ErrInvalidRequest},
		{in: `{"jsonrpc":"2.0","id":5,"method":"ping","params":3}`, id: `5`, wantErr: ErrInvalidRequest},
		{in: `{"jsonrpc":"2.0","id":{},"method":"ping"}`, wantErr: ErrInvalidRequest},
		{in: `{"jsonrpc":"2.0","id":6,"method":"ping",`, id: `6`, wantErr: ErrParse},
		{in: `{"jsonrpc":"2.0","id":6,"result":{},"error":{"code":1,"message":""}}`, id: `6`, wantErr: ErrInvalidRequest},
		{in: `{"jsonrpc":"2.0","result":{}}`, wantErr: ErrInvalidRequest},
		{in: `{"jsonrpc":"2.0","id":8,"method":""}`, id: `8`, wantErr: ErrInvalidRequest},
		{in: `not json`, wantErr: ErrParse},
		{in: `"a string"`, wantErr: ErrInvalidRequest},
		{in: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, wantErr: ErrInvalidRequest},
		{in: `{"jsonrpc":"2.0","id":9,"method":"ping"} {}`, id: `9`, wantErr: ErrParse},
	}
	for _, tt := range tests {
		m, err := Decode([]byte(tt.in))
		if tt.wantErr != nil {
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("Decode(%s) error = %v, want code %d", tt.in, err, tt.wantErr.Code)
			}
			if got := idOf(m); got != tt.id {
				t.Errorf("Decode(%s) id = %q, want %q (the error must be answerable)", tt.in, got, tt.id)
			}
			continue
		}
		if err != nil {
			t.Errorf("Decode(%s): %v", tt.in, err)
			continue
		}
		kind := map[bool]string{true: "request"}[m.IsRequest()]
		if m.IsNotification() {
			kind = "notification"
		} else if m.IsResponse() {
			kind = "response"
		}
		if kind != tt.kind || m.ID.String() != tt.id || m.Method != tt.method {
			t.Errorf("Decode(%s) = %s id %q method %q, want %s id %q method %q", tt.in, kind, m.ID, m.Method, tt.kind, tt.id, tt.method)
		}
	}
}

func idOf(m *Message) string {
	if m == nil {
		return ""
	}
	return m.ID.String()
}

func TestEncode(t *testing.T) {
	tests := []struct {
		m    Message
		want string
	}{
		{Message{ID: StringID("a"), Method: "ping"}, `{"jsonrpc":"2.0","id":"a","method":"ping"}`},
		{Message{Method: "n", Params: []byte(`{"x":1}`)}, `{"jsonrpc":"2.0","method":"n","params":{"x":1}}`},
		{Message{ID: IntID(3), Result: []byte(`{"ok":true}`)}, `{"jsonrpc":"2.0","id":3,"result":{"ok":true}}`},
		{Message{ID: IntID(3)}, `{"jsonrpc":"2.0","id":3,"result":{}}`},
		{Message{ID: IntID(4), Error: &Error{Code: -32601, Message: "no \"x\""}}, `{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"no \"x\""}}`},
		{Message{Error: &Error{Code: -32600, Message: "bad", Data: []byte(`[1]`)}}, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad","data":[1]}}`},
	}
	for _, tt := range tests {
		got := string(tt.m.Encode())
		if got != tt.want {
			t.Errorf("Encode = %s\nwant     %s", got, tt.want)
		}
		if _, err := Decode([]byte(got)); err != nil {
			t.Errorf("Decode(Encode()) of %s: %v", got, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`,
		`{"jsonrpc":"2.0","method":"n"}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m","data":null}}`,
		`{"jsonrpc":"2.0","id":1,"id":2}`, `[1,2]`, `{`, `"x"`, ``,
		`{"jsonrpc":"2.0","id":2,"method":"tools\/call"}`, `{"jsonrpc":"2.0","id":3,"method":"ping"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		// A reader decodes into its own Message and envelope array,
		// left as the last message left them: the same message comes out.
		scratch := Message{ID: IntID(99), Method: "stale", Result: json.RawMessage(`1`), Error: &Error{Code: 1}, Size: 7}
		envelope := rawjson.MemberList{{Key: "stale", Value: json.RawMessage(`1`)}}
		method := "tools/call"
		params := append(make(rawjson.MemberList, 0, 8), rawjson.Member{Key: "stale", Value: json.RawMessage(`2`)})
		inPlace, errInPlace := decode(data, &scratch, envelope[:0], params[:0], &method)
		if fmt.Sprint(err) != fmt.Sprint(errInPlace) || (m == nil) != (inPlace == nil) {
			t.Fatalf("decoded in place: %v, %v; Decode: %v, %v", inPlace, errInPlace, m, err)
		}
		if m != nil {
			pm, ok := m.ParamMembers()
			ipm, iok := inPlace.ParamMembers()
			if m.ID != inPlace.ID || m.Method != inPlace.Method || !bytes.Equal(m.Params, inPlace.Params) || !bytes.Equal(m.Result, inPlace.Result) ||
				fmt.Sprint(m.Error) != fmt.Sprint(inPlace.Error) || m.Size != inPlace.Size || ok != iok || fmt.Sprint(pm) != fmt.Sprint(ipm) {
				t.Fatalf("decoded in place: %+v; Decode: %+v", inPlace, m)
			}
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not a JSON-RPC error", err)
			}
			return
		}
		// What decodes must encode to something that decodes the same.
		again, err := Decode(m.Encode())
		if err != nil {
			t.Fatalf("re-decode of %s: %v", m.Encode(), err)
		}
		if again.ID != m.ID || again.Method != m.Method || !bytes.Equal(again.Params, m.Params) {
			t.Fatalf("round trip changed the message: %s vs %s", m.Encode(), again.Encode())
		}
	})
}

// A reader's last method is reused only for the same method written the
// same way, with no escape: "a\b" in JSON is not the string a\b.
func TestDecodeMethodReusesOnlyTheSame(t *testing.T) {
	for _, c := range []struct{ last, raw, want string }{
		{"tools/call", `"tools/call"`, "tools/call"},
		{"tools/call", `"tools\/call"`, "tools/call"},
		{"tools/call", `"tools/list"`, "tools/list"},
		{`a\b`, `"a\b"`, "a\b"},
		{`a\\b`, `"a\\b"`, `a\b`},
	} {
		last := c.last
		if got := decodeMethod([]byte(c.raw), &last); got != c.want || last != c.want {
			t.Errorf("decodeMethod(%s) after %q = %q, last %q; want %q", c.raw, c.last, got, last, c.want)
		}
	}
	last := "tools/call"
	raw := []byte(`"tools/call"`)
	if n := testing.AllocsPerRun(100, func() { decodeMethod(raw, &last) }); n != 0 {
		t.Errorf("the same method again took %v allocations, want none", n)
	}
}
