package httpfront

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/proxy"
)

// A modern request's session that ends (mcpgate shuts down) before its
// POST has handed it the request still counts that request among its
// handlers: it waits for the hand-off, so the request is never served
// after Serve returned, when nothing owns its handler any more and the
// gateway may have closed the audit trail it writes to.
func TestStatelessRequestNotServedAfterSessionEnded(t *testing.T) {
	front, _ := newTestFront(t, proxy.Options{}, nil)
	ended, cancel := context.WithCancel(context.Background())
	cancel() // shutting down: the session ends as soon as nothing runs
	for i := range 200 {
		msg, err := jsonrpc.DecodeBody([]byte(`{"jsonrpc":"2.0","id":1,"method":"no/such","params":{` + envelope + `}}`))
		if err != nil {
			t.Fatal(err)
		}
		st := newStatelessStream(msg, false)
		var over atomic.Bool
		done := make(chan struct{})
		go func() {
			defer close(done)
			front.g.Serve(ended, st, proxy.ServeOptions{Stateless: true})
			over.Store(true)
		}()
		<-st.hooked
		serve := st.serve
		var late bool
		st.serve = func(m *jsonrpc.Message, raw []byte, here bool) func() {
			late = over.Load()
			return serve(m, raw, here)
		}
		st.serveHere() // the POST's goroutine, scheduled late
		close(st.gone) // the POST left: its answer is not waited for
		<-done
		if late {
			t.Fatalf("request %d was handed to its session after Serve returned: its handler has no owner", i)
		}
	}
}
