package httpfront

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// An answer that nothing streams before is plain JSON with its length
// given: one write, the connection kept alive, and no chunked encoding
// (which a flush after the body would force, at the cost of a second write
// for the terminating chunk). Both eras: a session's POST and a modern one.
func TestJSONAnswerHasContentLength(t *testing.T) {
	_, ts := newServedFront(t, "", nil)
	check := func(t *testing.T, resp *http.Response) {
		t.Helper()
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("got %s (%s) %s, want a JSON answer", resp.Status, resp.Header.Get("Content-Type"), body)
		}
		if len(resp.TransferEncoding) > 0 {
			t.Errorf("Transfer-Encoding %v, want none", resp.TransferEncoding)
		}
		if got := resp.Header.Get("Content-Length"); got != strconv.Itoa(len(body)) {
			t.Errorf("Content-Length %q, want %d", got, len(body))
		}
	}
	t.Run("session", func(t *testing.T) {
		session := initialize(t, ts)
		resp := postSession(t, ts, session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello","arguments":{}}}`)
		check(t, resp)
	})
	t.Run("modern", func(t *testing.T) {
		check(t, postModern(t, ts, "tools/call", "hello", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello",`+envelope+`}}`))
	})
}

// postSession POSTs a message in a legacy session.
func postSession(t *testing.T, ts *httptest.Server, session, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(headerSession, session)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// A JSON answer of any size goes out with its Content-Length, unchunked:
// one up to net/http's buffer (smallAnswerBytes) is given it by net/http
// as the handler returns, a bigger one by json itself. The sizes are
// around that boundary, and in parts as a big result comes.
func TestJSONAnswerLengthAroundTheBuffer(t *testing.T) {
	for _, size := range []int{2, smallAnswerBytes - 1, smallAnswerBytes, smallAnswerBytes + 1, 3 * smallAnswerBytes} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			answer := []byte(`"` + strings.Repeat("x", size-2) + `"`)
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				half := len(answer) / 2
				newClientWriter(w, time.Minute).json(http.StatusOK, answer[:half], answer[half:])
			}))
			defer ts.Close()
			resp, err := ts.Client().Get(ts.URL)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) != string(answer) {
				t.Fatalf("got %d bytes, want the %d written", len(body), len(answer))
			}
			if len(resp.TransferEncoding) > 0 || resp.Header.Get("Content-Length") != strconv.Itoa(size) || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("Transfer-Encoding %v, Content-Length %q, Content-Type %q; want none, %d, application/json", resp.TransferEncoding, resp.Header.Get("Content-Length"), resp.Header.Get("Content-Type"), size)
			}
		})
	}
}
