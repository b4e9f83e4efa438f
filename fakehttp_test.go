package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// fakeHTTPMain serves a fake spec over Streamable HTTP, as a remote MCP
// server built on an official SDK does: a request the server makes while
// handling a tool call (spec "ask") goes on that call's own answer stream,
// which is how the server names the request it belongs to.
//
//	fakeupstream -http URLFILE SPEC.json
//
// It listens on a free loopback port and writes its URL to URLFILE. Tools
// called in a legacy session may use text, wait_for_file, ask and input;
// nothing else. A modern or dual fake ("era") serves the 2026-07-28 wire
// as fakehttpmodern_test.go says, where every behaviour works as on stdio.
// The spec's "http" object changes how it serves (fakeHTTPOptions); its
// "log" gets every message POSTed, a line for every GET and, for a modern
// or dual fake, a line "headers {JSON}" with each POST's Mcp-* headers
// before its message, and "client closed the stream of id ID" when a
// client closes a modern request's stream before the answer.
func fakeHTTPMain(urlFile, specFile string) int {
	data, err := os.ReadFile(specFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeupstream:", err)
		return 2
	}
	var spec fakeSpec
	if err := json.Unmarshal(data, &spec); err == nil {
		err = spec.check()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fakeupstream: %s: %v\n", specFile, err)
		return 2
	}
	f := newFake(spec)
	h := &fakeHTTP{f: f, waiting: map[jsonrpc.ID]chan json.RawMessage{}, streams: map[int]*fakeStream{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeupstream:", err)
		return 1
	}
	// Written whole, then renamed into place: a script's waitfile returns
	// as soon as the file exists, and an envfile right after it read an
	// empty URL now and then while the file was being written.
	err = os.WriteFile(urlFile+".tmp", []byte("http://"+ln.Addr().String()+"/mcp"), 0o644)
	if err == nil {
		err = os.Rename(urlFile+".tmp", urlFile)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeupstream:", err)
		return 1
	}
	http.Serve(ln, h)
	return 0
}

// fakeHTTPOptions shape how fakeupstream -http serves.
type fakeHTTPOptions struct {
	// Resumable: a tool call's event stream is one event per connection, as
	// a server that polls serves it: the POST gets a priming event (an id,
	// and retry_ms) and is closed; each GET with Last-Event-ID gets the next
	// event of that stream (a request to the client, the answer) and is
	// closed.
	Resumable bool `json:"resumable"`
	RetryMS   int  `json:"retry_ms"`
	// StandaloneAsks: requests to the client go on the GET stream, tied to
	// no request (as a TypeScript SDK server's server.request does), and
	// are dropped while no GET stream is open, as that SDK drops them.
	StandaloneAsks bool `json:"standalone_asks"`
	// HoldInitialized: answer notifications/initialized only once this
	// file exists (a slow answer; the server has read it).
	HoldInitialized string `json:"hold_initialized"`
	// Refuse: the first POSTs of a method get an HTTP status instead of an
	// answer (a server restarting behind a load balancer, or shedding
	// load), each logged as "refused METHOD: STATUS".
	Refuse []fakeRefusal `json:"refuse"`
}

// fakeRefusal answers the first Times POSTs of Method with Status and, if
// set, a Retry-After header.
type fakeRefusal struct {
	Method     string `json:"method"`
	Times      int    `json:"times"`
	Status     int    `json:"status"`
	RetryAfter string `json:"retry_after"`
}

type fakeHTTP struct {
	f *fake

	mu         sync.Mutex
	nextID     int64
	waiting    map[jsonrpc.ID]chan json.RawMessage // our requests to the client, by id
	streams    map[int]*fakeStream                 // resumable tool call streams, by number
	standalone chan []byte                         // the open GET stream's queue; nil when none is open
}

// fakeStream is the events of one resumable tool call stream, in order.
type fakeStream struct {
	mu     sync.Mutex
	events [][]byte
	more   chan struct{} // closed and replaced when an event is added
}

func (s *fakeStream) add(msg []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, msg)
	close(s.more)
	s.more = make(chan struct{})
}

// event returns event n (1-based), waiting for it.
func (s *fakeStream) event(n int, done <-chan struct{}) ([]byte, bool) {
	for {
		s.mu.Lock()
		if n <= len(s.events) {
			ev := s.events[n-1]
			s.mu.Unlock()
			return ev, true
		}
		more := s.more
		s.mu.Unlock()
		select {
		case <-more:
		case <-done:
			return nil, false
		}
	}
}

func (h *fakeHTTP) log(line string) {
	if h.f.spec.Log == "" {
		return
	}
	h.f.logMu.Lock()
	defer h.f.logMu.Unlock()
	if lf, err := os.OpenFile(h.f.spec.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err == nil {
		fmt.Fprintln(lf, line)
		lf.Close()
	}
}

func (h *fakeHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	modernOnly := h.f.era() == eraModern
	if r.Method == http.MethodGet && !modernOnly {
		h.serveGet(w, r)
		return
	}
	if r.Method != http.MethodPost {
		if modernOnly {
			if r.URL.Path != "/healthz" { // a client waiting for the server to start
				h.log(r.Method + " refused: 405")
			}
			w.Header().Set("Allow", "POST")
		}
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	if h.f.era() != eraLegacy {
		h.log(mcpHeaderLog(r))
	}
	h.log(string(body))
	msg, err := jsonrpc.Decode(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if h.refuse(w, msg.Method) {
		return
	}
	if h.f.era() != eraLegacy && h.serveModern(w, r, msg) {
		return
	}
	w.Header().Set("Mcp-Session-Id", "fake-session")
	switch {
	case msg.IsResponse():
		h.mu.Lock()
		ch := h.waiting[msg.ID]
		delete(h.waiting, msg.ID)
		h.mu.Unlock()
		if ch != nil {
			res := msg.Result
			if msg.Error != nil {
				res = json.RawMessage(fmt.Sprintf("%q", "error: "+msg.Error.Message))
			}
			ch <- res
		}
		w.WriteHeader(http.StatusAccepted)
	case msg.Method == "notifications/initialized" && h.f.spec.HTTP.HoldInitialized != "":
		for {
			if _, err := os.Stat(h.f.spec.HTTP.HoldInitialized); err == nil {
				break
			}
			select {
			case <-r.Context().Done():
				return
			case <-time.After(5 * time.Millisecond): // polling a file for an event
			}
		}
		w.WriteHeader(http.StatusAccepted)
	case msg.IsNotification():
		w.WriteHeader(http.StatusAccepted)
	case msg.Method == "tools/call" && h.f.spec.HTTP.Resumable:
		h.callToolResumable(w, msg)
	case msg.Method == "tools/call":
		h.callTool(w, r, msg)
	default:
		res, err := h.f.Handle(r.Context(), msg)
		reply := &jsonrpc.Message{ID: msg.ID, Result: res}
		if err != nil {
			reply = &jsonrpc.Message{ID: msg.ID, Error: jsonrpc.ToWire(err)}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(reply.Encode())
	}
}

// refuse answers a POST of method with the status the spec's refuse says,
// while its times last, and reports whether it did.
func (h *fakeHTTP) refuse(w http.ResponseWriter, method string) bool {
	h.mu.Lock()
	var r *fakeRefusal
	for i := range h.f.spec.HTTP.Refuse {
		if c := &h.f.spec.HTTP.Refuse[i]; c.Method == method && c.Times > 0 {
			c.Times--
			r = c
			break
		}
	}
	h.mu.Unlock()
	if r == nil {
		return false
	}
	h.log(fmt.Sprintf("refused %s: %d", method, r.Status))
	if r.RetryAfter != "" {
		w.Header().Set("Retry-After", r.RetryAfter)
	}
	http.Error(w, "busy, try later", r.Status)
	return true
}

// serveGet serves a GET: with Last-Event-ID, the next event of a resumable
// stream; without, the stream for requests tied to no request, where the
// spec asks for one (405 otherwise).
func (h *fakeHTTP) serveGet(w http.ResponseWriter, r *http.Request) {
	last := r.Header.Get("Last-Event-ID")
	h.log("GET Last-Event-ID: " + last)
	if last != "" {
		h.resumeStream(w, r, last)
		return
	}
	if !h.f.spec.HTTP.StandaloneAsks {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	queue := make(chan []byte, 16)
	h.mu.Lock()
	h.standalone = queue
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		if h.standalone == queue {
			h.standalone = nil
		}
		h.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	for {
		select {
		case msg := <-queue:
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg)
			w.(http.Flusher).Flush()
		case <-r.Context().Done():
			return
		}
	}
}

// sendStandalone sends msg on the GET stream, and reports false (the
// message is dropped) when none is open.
func (h *fakeHTTP) sendStandalone(msg []byte) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.standalone == nil {
		return false
	}
	select {
	case h.standalone <- msg:
		return true
	default:
		return false
	}
}

// resumeStream answers a GET with Last-Event-ID "N-K": event K+1 of stream
// N, once there is one, and then closes the connection.
func (h *fakeHTTP) resumeStream(w http.ResponseWriter, r *http.Request, last string) {
	num, seq, _ := strings.Cut(last, "-")
	n, err1 := strconv.Atoi(num)
	k, err2 := strconv.Atoi(seq)
	h.mu.Lock()
	s := h.streams[n]
	h.mu.Unlock()
	if err1 != nil || err2 != nil || s == nil {
		http.Error(w, "unknown event id", http.StatusNotFound)
		return
	}
	ev, ok := s.event(k+1, r.Context().Done())
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "id: %d-%d\nevent: message\ndata: %s\n\n", n, k+1, ev)
}

// toolBehaviour finds what calling a tool does.
func (h *fakeHTTP) toolBehaviour(name string) fakeBehaviour {
	for _, t := range h.f.spec.Tools {
		var named struct {
			Name string `json:"name"`
		}
		json.Unmarshal(t.Raw, &named)
		if named.Name == name {
			return t.Do
		}
	}
	return fakeBehaviour{}
}

// runTool does what a tool call does: send holds the request to the
// client (ask) and the answer, in order; done ends the wait for the client.
func (h *fakeHTTP) runTool(msg *jsonrpc.Message, send func(*jsonrpc.Message), done <-chan struct{}) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	json.Unmarshal(msg.Params, &p)
	do := h.toolBehaviour(p.Name)
	if do.WaitForFile != "" {
		for {
			if _, err := os.Stat(do.WaitForFile); err == nil {
				break
			}
			time.Sleep(5 * time.Millisecond) // polling a file for an event
		}
	}
	text := do.Text
	if do.Ask != nil {
		res, err := h.ask(do.Ask.Method, do.Ask.Params, send, done)
		switch {
		case errors.Is(err, context.Canceled):
			return
		case err != nil:
			text = "no answer from the client"
		default:
			text = "client answered: " + string(res)
		}
	}
	if len(do.Input) > 0 {
		answers, err := inputByRequests(context.Background(), do.Input, func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			return h.ask(method, params, send, done)
		})
		if err != nil {
			return
		}
		text = h.f.inputEcho(p.Name, answers)
	}
	if do.TextBytes > len(text) {
		text += strings.Repeat("x", do.TextBytes-len(text))
	}
	if text == "" {
		text = fmt.Sprintf("%s/%s %s", h.f.spec.Name, p.Name, strings.TrimSpace(string(p.Arguments)))
	}
	res, _ := json.Marshal(map[string]any{"content": []any{map[string]string{"type": "text", "text": text}}})
	send(&jsonrpc.Message{ID: msg.ID, Result: res})
}

// errStreamGone: the call's stream closed while it waited for the client.
var errStreamGone = fmt.Errorf("the call's stream closed: %w", context.Canceled)

// ask sends a request to the client, on the call's stream (or the GET
// stream, with standalone_asks), and waits for the answer: errStreamGone
// when done ends the wait, another error when the client gave none in 20s.
func (h *fakeHTTP) ask(method string, params json.RawMessage, send func(*jsonrpc.Message), done <-chan struct{}) (json.RawMessage, error) {
	h.mu.Lock()
	h.nextID++
	id := jsonrpc.StringID(fmt.Sprintf("ask-%d", h.nextID))
	ch := make(chan json.RawMessage, 1)
	h.waiting[id] = ch
	h.mu.Unlock()
	ask := &jsonrpc.Message{ID: id, Method: method, Params: params}
	if !h.f.spec.HTTP.StandaloneAsks {
		send(ask)
	} else if !h.sendStandalone(ask.Encode()) {
		h.log("dropped " + method + ": no GET stream open")
	}
	select {
	case res := <-ch:
		return res, nil
	case <-done:
		return nil, errStreamGone
	case <-time.After(20 * time.Second):
		return nil, fmt.Errorf("no answer from the client to %s in 20s", method)
	}
}

// callTool answers on an event stream, so that a request to the client can
// come first on the same stream.
func (h *fakeHTTP) callTool(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	if raw := h.f.rawAnswer(msg); raw != "" {
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", strings.ReplaceAll(raw, "{{id}}", msg.ID.String()))
		return
	}
	h.runTool(msg, func(m *jsonrpc.Message) {
		// In three writes: Fprintf would copy a big result once more,
		// which made the fake's own endpoint, mcpgate's baseline in
		// BenchmarkPerfHTTPBigResult, slower than it need be.
		io.WriteString(w, "event: message\ndata: ")
		w.Write(m.Encode())
		io.WriteString(w, "\n\n")
		w.(http.Flusher).Flush()
	}, r.Context().Done())
}

// callToolResumable opens the call's stream with a priming event and
// closes the connection; the tool runs on, its events kept for GETs with
// Last-Event-ID.
func (h *fakeHTTP) callToolResumable(w http.ResponseWriter, msg *jsonrpc.Message) {
	s := &fakeStream{more: make(chan struct{})}
	h.mu.Lock()
	n := len(h.streams) + 1
	h.streams[n] = s
	h.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "id: %d-0\nretry: %d\ndata: \n\n", n, h.f.spec.HTTP.RetryMS)
	go h.runTool(msg, func(m *jsonrpc.Message) { s.add(m.Encode()) }, make(chan struct{}))
}
