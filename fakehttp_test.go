package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
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
// may use text, wait_for_file and ask; nothing else.
func fakeHTTPMain(urlFile, specFile string) int {
	data, err := os.ReadFile(specFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeupstream:", err)
		return 2
	}
	var spec fakeSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		fmt.Fprintln(os.Stderr, "fakeupstream:", err)
		return 2
	}
	f := &fake{spec: spec, listed: make(chan struct{}, 1), asked: make(chan struct{})}
	h := &fakeHTTP{f: f, waiting: map[jsonrpc.ID]chan json.RawMessage{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeupstream:", err)
		return 1
	}
	if err := os.WriteFile(urlFile, []byte("http://"+ln.Addr().String()+"/mcp"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "fakeupstream:", err)
		return 1
	}
	http.Serve(ln, h)
	return 0
}

type fakeHTTP struct {
	f *fake

	mu      sync.Mutex
	nextID  int64
	waiting map[jsonrpc.ID]chan json.RawMessage // our requests to the client, by id
}

func (h *fakeHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	msg, err := jsonrpc.Decode(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
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
	case msg.IsNotification():
		w.WriteHeader(http.StatusAccepted)
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

// callTool answers on an event stream, so that a request to the client can
// come first on the same stream.
func (h *fakeHTTP) callTool(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	json.Unmarshal(msg.Params, &p)
	var do fakeBehaviour
	for _, t := range h.f.spec.Tools {
		var named struct {
			Name string `json:"name"`
		}
		json.Unmarshal(t.Raw, &named)
		if named.Name == p.Name {
			do = t.Do
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	send := func(m *jsonrpc.Message) {
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", m.Encode())
		w.(http.Flusher).Flush()
	}
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
		h.mu.Lock()
		h.nextID++
		id := jsonrpc.StringID(fmt.Sprintf("ask-%d", h.nextID))
		ch := make(chan json.RawMessage, 1)
		h.waiting[id] = ch
		h.mu.Unlock()
		send(&jsonrpc.Message{ID: id, Method: do.Ask.Method, Params: do.Ask.Params})
		select {
		case res := <-ch:
			text = "client answered: " + string(res)
		case <-r.Context().Done():
			return
		case <-time.After(20 * time.Second):
			text = "no answer from the client"
		}
	}
	if text == "" {
		text = fmt.Sprintf("%s/%s %s", h.f.spec.Name, p.Name, strings.TrimSpace(string(p.Arguments)))
	}
	res, _ := json.Marshal(map[string]any{"content": []any{map[string]string{"type": "text", "text": text}}})
	send(&jsonrpc.Message{ID: msg.ID, Result: res})
}
