package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/internal/rawjson"
)

// httpFloorMain is the floor of any HTTP gateway in front of a stdio server
// (issue 13), as relayfloor is of a stdio one: a minimal net/http server
// that starts one server over stdio and, for each POST, writes the body to
// it as a line and answers with the line that carries the same id, as
// JSON. Nothing else: no session, no validation, no event stream, no
// limits. A POST without an id (a notification) is written and answered
// 202 at once; a server's line that answers no POST is dropped. What
// mcpgate -listen spends beyond it is its own; what it spends beyond the
// server's own HTTP endpoint is the two pipe hops and this process.
//
//	httpfloor URLFILE COMMAND [ARG...]
//
// It writes its URL to URLFILE once it listens (as fakeupstream -http
// does) and serves until killed or until the server exits.
func httpFloorMain(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: httpfloor URLFILE COMMAND [ARG...]")
		return 2
	}
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Stderr = os.Stderr
	toServer, err := cmd.StdinPipe()
	var fromServer io.ReadCloser
	if err == nil {
		fromServer, err = cmd.StdoutPipe()
	}
	if err == nil {
		err = cmd.Start()
	}
	var ln net.Listener
	if err == nil {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err == nil {
		err = os.WriteFile(args[0]+".tmp", []byte("http://"+ln.Addr().String()+"/mcp"), 0o644)
	}
	if err == nil {
		err = os.Rename(args[0]+".tmp", args[0])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "httpfloor:", err)
		return 1
	}
	floor := &httpFloor{toServer: toServer, waiting: map[string]chan []byte{}}
	go func() {
		floor.readAnswers(fromServer)
		os.Exit(0) // the server is gone: nothing more can be answered
	}()
	srv := &http.Server{Handler: floor, ReadHeaderTimeout: time.Minute}
	fmt.Fprintln(os.Stderr, "httpfloor:", srv.Serve(ln))
	return 1
}

// httpFloor relays POSTs to one stdio server. Its waiting POSTs are keyed by
// the raw bytes of their id, as the server echoes them.
type httpFloor struct {
	writeMu  sync.Mutex
	toServer io.Writer

	mu      sync.Mutex
	waiting map[string]chan []byte
}

func (f *httpFloor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id := topLevelID(body)
	var answer chan []byte
	if id != "" {
		answer = make(chan []byte, 1)
		f.mu.Lock()
		f.waiting[id] = answer
		f.mu.Unlock()
	}
	f.writeMu.Lock()
	_, err = f.toServer.Write(append(body, '\n'))
	f.writeMu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if answer == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	select {
	case line := <-answer:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(line)))
		w.Write(line)
	case <-r.Context().Done():
		f.mu.Lock()
		delete(f.waiting, id)
		f.mu.Unlock()
	}
}

// readAnswers hands each line the server writes to the POST waiting for its
// id, until the server closes its stdout.
func (f *httpFloor) readAnswers(fromServer io.Reader) {
	r := bufio.NewReaderSize(fromServer, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			if !errors.Is(err, io.EOF) {
				fmt.Fprintln(os.Stderr, "httpfloor:", err)
			}
			return
		}
		line = bytes.TrimSpace(line)
		id := topLevelID(line)
		f.mu.Lock()
		answer := f.waiting[id]
		delete(f.waiting, id)
		f.mu.Unlock()
		if answer != nil {
			answer <- line
		}
	}
}

// topLevelID is the raw bytes of a message's top-level "id", or "".
func topLevelID(msg []byte) string {
	ms, err := rawjson.Members(msg)
	if err != nil {
		return ""
	}
	id, _ := ms.Get("id")
	return string(id)
}
