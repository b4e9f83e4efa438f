package jsonrpc

import (
	"context"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The reader lets go of a big answer's line once it is delivered: its
// reused decoding state (the answer, the splits) viewed the line until the
// next message overwrote it, so a 50 MiB result was held twice at the
// next one's peak (peak RSS 4.2× the result, against 2.3×).
func TestReaderLetsGoOfABigLine(t *testing.T) {
	const size = 32 << 20
	big := json.RawMessage(`"` + strings.Repeat("x", size) + `"`)
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	client := NewConn(NewLineStream(cr, cw, multiCloser{cr, cw}, 64<<20), Options{}).Start()
	server := NewConn(NewLineStream(sr, sw, multiCloser{sr, sw}, 64<<20), Options{Handler: HandlerFunc(func(context.Context, *Message) (json.RawMessage, error) {
		return big, nil
	})}).Start()
	t.Cleanup(func() { client.Close(); server.Close() })

	res, err := client.Call(watchdog(t), "big", nil)
	if err != nil || len(res) != len(big) {
		t.Fatalf("Call: %d bytes, %v", len(res), err)
	}
	res = nil
	// The handler keeps big (one copy); the reader's line would be another.
	var heap uint64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if heap = ms.HeapAlloc; heap < size+size/2 {
			return
		}
	}
	t.Errorf("%d MiB still allocated once the answer was delivered and dropped; want under %d MiB (the handler's copy)", heap>>20, (size+size/2)>>20)
}
