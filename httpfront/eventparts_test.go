package httpfront

import (
	"bytes"
	"testing"

	"github.com/mcpgate/mcpgate/internal/sse"
)

// FuzzWriteEvent checks that an event written from parts is byte for byte
// the one sse.Write writes from the parts joined, line breaks (\r\n split
// across two parts included) and all.
func FuzzWriteEvent(f *testing.F) {
	f.Add([]byte(`{"a":1}`), []byte("x\r"), []byte("\ny\rz\n"))
	f.Add([]byte(""), []byte("\r\n\r\n"), []byte("\r"))
	f.Add([]byte("\n"), []byte(""), []byte("\n"))
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		var want, got bytes.Buffer
		sse.Write(&want, "", bytes.Join([][]byte{a, b, c}, nil))
		if err := writeEvent(&got, [][]byte{a, b, c}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("parts %q %q %q: wrote %q, want %q", a, b, c, got.Bytes(), want.Bytes())
		}
	})
}
