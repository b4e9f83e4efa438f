package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/proxy"
)

// An inline call's pooled state (its renamed params, its call to the
// server, see inlinepool.go) is reused by the next call as soon as it is
// answered. Calls renamed on the way (greeter__hello to hello), from
// several sessions at once, under ids of every spelling a client may use
// (strings around the 16 bytes a kept request holds of its id, escapes,
// numbers written with a fraction), some cancelled by their client: every
// answer carries the client's id exactly as written and its own call's
// result, and every audit record the params its own call sent. A state
// read after reuse shows as another call's text here, and under -race as
// a race.
func TestInlineCallReuseIDsAndAudit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	self, _ := os.Executable()
	trail := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg, err := config.Load([]byte(fmt.Sprintf(`{"mcpServers": {"greeter": {"command": %q, "env": {"MCPGATE_EXAMPLE_SERVER": "1"}}},
		"audit": {"path": %q, "include_bodies": true}, "policies": []}`, self, trail)), "mcpgate.json", os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	g, err := proxy.New(cfg, proxy.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	g.Start()
	closed := false
	defer func() {
		if !closed {
			g.Close()
		}
	}()

	const sessions, calls, window = 4, 400, 12
	var (
		mu   sync.Mutex
		sent = map[string]reuseTestCall{} // by id as written
	)
	var wg sync.WaitGroup
	errs := make(chan error, 2*sessions)
	for s := range sessions {
		c := dialRaw(t, g)
		wg.Go(func() {
			defer c.close()
			slots := make(chan struct{}, window)
			readerDone := make(chan struct{})
			var answered int
			failed := make(chan struct{}) // closed at the first wrong answer: the writer stops
			fail := func(err error) {
				select {
				case <-failed:
				default:
					errs <- err
					close(failed)
				}
			}
			go func() {
				defer close(readerDone)
				for { // read to the end, whatever comes: the gateway must never wait for us
					ans, ok := c.next()
					if !ok {
						return
					}
					mu.Lock()
					call, known := sent[string(ans.ID)]
					mu.Unlock()
					switch {
					case !known:
						fail(fmt.Errorf("session %d: an answer with the id %s, which was never sent so spelt: %s", s, ans.ID, ans.line))
						continue
					case ans.Error == nil && !bytes.Contains(ans.Result, []byte(`"`+call.text+`"`)):
						fail(fmt.Errorf("session %d: the call %s (id %s) was answered %s", s, call.text, ans.ID, ans.Result))
					}
					if !call.cancelled {
						answered++
						<-slots
					}
				}
			}()
			for i := range calls {
				text := fmt.Sprintf("s%d-%d", s, i)
				id := reuseTestID(s, i)
				cancel := i%5 == 4
				mu.Lock()
				sent[id] = reuseTestCall{text, cancel}
				mu.Unlock()
				if !cancel {
					select {
					case slots <- struct{}{}:
					case <-failed:
						return
					}
				}
				c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"greeter__hello","arguments":{"echo":"` + text + `"}}}`)
				if cancel {
					c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`)
				}
			}
			for range window { // every call not cancelled is answered
				select {
				case slots <- struct{}{}:
				case <-failed:
					return
				}
			}
			c.close()
			<-readerDone
			// The client does not wait for the calls it cancelled (no answer
			// comes to them), but Serve does: a record is complete once Serve
			// returned, and Close comes after (see Gateway.Close).
			<-c.served
			select {
			case <-failed:
				return
			default:
			}
			if answered != calls*4/5 {
				errs <- fmt.Errorf("session %d: %d answers to calls not cancelled, want %d", s, answered, calls*4/5)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	g.Close() // every Serve returned: the trail is complete
	closed = true

	f, err := os.ReadFile(trail)
	if err != nil {
		t.Fatal(err)
	}
	records := 0
	recorded := map[string]int{} // by id as written
	for line := range bytes.Lines(f) {
		var r struct {
			Method string
			Name   string
			ID     json.RawMessage
			Params json.RawMessage
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("audit line %s: %v", line, err)
		}
		if r.Method != "tools/call" {
			continue
		}
		records++
		recorded[string(r.ID)]++
		call, known := sent[string(r.ID)]
		text := call.text
		if !known {
			t.Errorf("an audit record of a call with the id %s, which was never sent so spelt: %s", r.ID, line)
			continue
		}
		want := `{"name":"hello","arguments":{"echo":"` + text + `"}}`
		if r.Name != "greeter__hello" || string(r.Params) != want {
			t.Errorf("the audit record of the call %s (id %s) names %q with the params %s, want greeter__hello with %s", text, r.ID, r.Name, r.Params, want)
		}
	}
	if records != sessions*calls {
		t.Errorf("%d audit records of tools/call, want %d%s", records, sessions*calls, reuseTestMissing(sent, recorded))
	}
}

// reuseTestMissing names the calls sent without exactly one audit record,
// and whether their client cancelled them: what a failure needs to be
// understood.
func reuseTestMissing(sent map[string]reuseTestCall, recorded map[string]int) string {
	var b strings.Builder
	ids := slices.Sorted(maps.Keys(sent))
	for _, id := range ids {
		if n := recorded[id]; n != 1 {
			call := sent[id]
			fmt.Fprintf(&b, "\n\tthe call %s (id %s, cancelled: %v) has %d records", call.text, id, call.cancelled, n)
		}
	}
	return b.String()
}

type reuseTestCall struct {
	text      string
	cancelled bool
}

// reuseTestID is the id of session s's call i, as the client writes it:
// strings of 14 to 19 bytes (a kept request holds 16 of its id), some
// with escapes, and numbers, some written with a fraction.
func reuseTestID(s, i int) string {
	n := s*100000 + i
	switch i % 6 {
	case 0, 1, 2:
		id := fmt.Sprintf("r%d-%d", s, i)
		pad := 12 + i%6 - len(id) // 14, 15 or 16 bytes with the quotes
		if i%12 >= 6 {
			pad += 3 // 17, 18 or 19
		}
		return `"` + id + strings.Repeat("x", max(pad, 0)) + `"`
	case 3:
		return fmt.Sprintf(`"\u0065%d-%d"`, s, i) // "e…", escaped
	case 4:
		return fmt.Sprint(n)
	default:
		return fmt.Sprintf("%d.0", n)
	}
}

// rawClient is a client session written and read line by line, so that
// ids go out and come back exactly as written.
type rawClient struct {
	t      *testing.T
	w      io.WriteCloser
	r      *bufio.Reader
	wmu    sync.Mutex
	close  func()
	served chan struct{} // closed once Serve has returned
}

type rawAnswer struct {
	ID     json.RawMessage
	Result json.RawMessage
	Error  json.RawMessage
	line   []byte
}

// dialRaw opens an initialized session of g whose tools are listed.
func dialRaw(t *testing.T, g *proxy.Gateway) *rawClient {
	t.Helper()
	toGateway, fromClient := io.Pipe()
	toClient, fromGateway := io.Pipe()
	c := &rawClient{t: t, w: fromClient, r: bufio.NewReaderSize(toClient, 64<<10), served: make(chan struct{})}
	go func() {
		defer close(c.served)
		g.Serve(context.Background(), jsonrpc.NewLineStream(toGateway, fromGateway, fromGateway, 0), proxy.ServeOptions{})
	}()
	var once sync.Once
	c.close = func() { once.Do(func() { fromClient.Close(); toClient.Close() }) }
	t.Cleanup(c.close)
	c.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if _, ok := c.next(); !ok {
		t.Fatal("initialize was not answered")
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":"list","method":"tools/list"}`)
	if _, ok := c.next(); !ok {
		t.Fatal("tools/list was not answered")
	}
	return c
}

func (c *rawClient) send(line string) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	io.WriteString(c.w, line+"\n")
}

// next is the next answer read; false once the session is closed.
func (c *rawClient) next() (rawAnswer, bool) {
	for {
		line, err := c.r.ReadBytes('\n')
		if err != nil {
			return rawAnswer{}, false
		}
		var a rawAnswer
		a.line = line
		if json.Unmarshal(line, &a) != nil {
			a.ID = json.RawMessage("(unreadable)")
			return a, true
		}
		if a.ID == nil {
			continue // a notification
		}
		return a, true
	}
}
