package httpfront

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A message related to a request that comes after its answer, while the
// handler still runs on the POST's goroutine (a late progress
// notification relayed by another goroutine), does not start a stream that
// waits for an answer given already: the POST is answered, with JSON.
func TestDirectMessageAfterAnswerDoesNotHoldPOST(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	late := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}`
	resp, body := directServe(t, func(st *httpStream, id jsonrpc.ID) {
		st.WriteRelated(context.Background(), []byte(directAnswer), id, true)
		done := make(chan struct{})
		go func() {
			defer close(done)
			st.WriteNotification([]byte(late), id)
		}()
		<-done
	}, ctx)
	if ctx.Err() != nil {
		t.Fatalf("the POST was not answered (its answer was kept, then a late notification started a stream waiting for it); got %q", body)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" || body != directAnswer {
		t.Errorf("got %s %s %q, want the answer as JSON", resp.Status, resp.Header.Get("Content-Type"), body)
	}
	if strings.Contains(body, late) {
		t.Errorf("a message after the answer went out on its POST: %q", body)
	}
}
