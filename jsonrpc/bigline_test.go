package jsonrpc

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// A long line is validated and split while it is read, and Decode takes
// that split instead of scanning it again: what it decodes, and the
// errors it reports, are the same as for the same bytes read whole.
func TestLongLineDecodesAsWhole(t *testing.T) {
	text := strings.Repeat("0123456789", 30<<10) // 300 KiB: longer than the read buffer
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + text + `"}],"isError":true}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":{"t":"` + text + `"}}}`,
		` {"jsonrpc":"2.0","id":8,"result":{"a":[1,2,{"b":null}],"t":"` + text + `"}} `,
		`{"jsonrpc":"2.0","id":9,"result":{"t":"` + text + `"},"result":{}}`,         // a duplicate member
		`{"jsonrpc":"2.0","id":10,"result":{"t":"` + text + `"}`,                     // cut short
		`{"jsonrpc":"2.0","id":11,"result":{"t":"` + text + `"}, "extra":true}`,      // not JSON-RPC
		`{"jsonrpc":"2.0","id":12,"method":"m","params":{"a":1,"a":"` + text + `"}}`, // a duplicate in params
	} {
		s := NewLineStream(strings.NewReader(msg+"\n"), io.Discard, nil, 1<<20)
		line, err := s.Read()
		if err != nil {
			t.Fatal(err)
		}
		got, gotErr := Decode(line)
		want, wantErr := Decode(bytes.Clone(line))
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("%.60s…: error %v, want %v", msg, gotErr, wantErr)
			continue
		}
		if got == nil || want == nil {
			if (got == nil) != (want == nil) {
				t.Errorf("%.60s…: message %v, want %v", msg, got, want)
			}
			continue
		}
		if got.ID != want.ID || got.Method != want.Method || !bytes.Equal(got.Params, want.Params) || !bytes.Equal(got.Result, want.Result) {
			t.Errorf("%.60s…: decoded differently from the same bytes read whole", msg)
		}
		gm, gok := got.ParamMembers()
		wm, wok := want.ParamMembers()
		if gok != wok || fmt.Sprint(gm) != fmt.Sprint(wm) {
			t.Errorf("%.60s…: params split %v %.80v, want %v %.80v", msg, gok, gm, wok, wm)
		}
	}
}
