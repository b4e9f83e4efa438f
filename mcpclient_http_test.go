package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// httpTransport is mcpclient over Streamable HTTP, or with legacy set, the
// older HTTP+SSE transport.
type httpTransport struct {
	c      *client
	url    string
	legacy bool
	ctx    context.Context // ends the event streams
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	session  string
	protocol string
	headers  map[string]string
	endpoint string // legacy: where to POST
	loaded   int    // requests sent by load lines, for their ids
}

func newHTTPTransport(c *client, rawURL string, legacy bool) (*httpTransport, error) {
	ctx, cancel := context.WithCancel(context.Background())
	t := &httpTransport{c: c, url: rawURL, legacy: legacy, ctx: ctx, cancel: cancel, headers: map[string]string{}}
	if err := waitHealthy(rawURL, c.timeout); err != nil {
		return nil, err
	}
	if legacy {
		ready := make(chan struct{})
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			defer resp.Body.Close()
			readEvents(resp.Body, func(typ string, data []byte) {
				if typ == "endpoint" {
					base, _ := url.Parse(rawURL)
					ref, _ := url.Parse(string(data))
					t.mu.Lock()
					t.endpoint = base.ResolveReference(ref).String()
					t.mu.Unlock()
					close(ready)
					return
				}
				c.add(data)
			})
		}()
		select {
		case <-ready:
		case <-time.After(c.timeout):
			return nil, errors.New("no endpoint event on the SSE stream")
		}
	}
	return t, nil
}

// waitHealthy waits for the server to answer /healthz: it may still be
// starting when the script runs the client.
func waitHealthy(rawURL string, timeout time.Duration) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	health := u.Scheme + "://" + u.Host + "/healthz"
	deadline := time.Now().Add(timeout)
	for {
		resp, err := http.Get(health)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not come up: %v", health, err)
		}
		time.Sleep(20 * time.Millisecond) // polling for the server to start listening
	}
}

func (t *httpTransport) newRequest(method, target string, body []byte) *http.Request {
	req, _ := http.NewRequestWithContext(t.ctx, method, target, bytes.NewReader(body))
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.session != "" && !t.legacy {
		req.Header.Set("Mcp-Session-Id", t.session)
	}
	if t.protocol != "" && !t.legacy {
		req.Header.Set("MCP-Protocol-Version", t.protocol)
	}
	for k, v := range t.headers {
		if strings.EqualFold(k, "Host") {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	return req
}

// headerSnapshot returns the headers set by header lines.
func (t *httpTransport) headerSnapshot() map[string]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.headers)
}

func (t *httpTransport) send(msg string) error {
	target := t.url
	if t.legacy {
		t.mu.Lock()
		target = t.endpoint
		t.mu.Unlock()
	}
	req := t.newRequest(http.MethodPost, target, []byte(msg))
	if strings.Contains(msg, `"method":"initialize"`) {
		req.Header.Del("Mcp-Session-Id") // an initialize starts a new session
		req.Header.Del("MCP-Protocol-Version")
	}
	req.Header.Set("Content-Type", "application/json")
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	// A POST is answered when the request finishes, which may be after the
	// next session line (a tool waiting for a file the script writes next).
	// Wait a little for the answer's headers so that errors print in script
	// order; after that the answer is handled in the background.
	headers := make(chan struct{})
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			close(headers)
			if t.ctx.Err() == nil {
				fmt.Printf("POST failed: %v\n", err)
			}
			return
		}
		t.answer(msg, resp, headers)
	}()
	select {
	case <-headers:
	case <-time.After(200 * time.Millisecond):
	}
	return nil
}

// answer handles a POST's answer; headers is closed once what must happen
// before the next session line (printing an error status, noting the
// session) has happened.
func (t *httpTransport) answer(msg string, resp *http.Response, headers chan struct{}) {
	defer resp.Body.Close()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && strings.Contains(msg, `"method":"initialize"`) {
		t.mu.Lock()
		t.session = sid
		t.mu.Unlock()
	}
	switch ct := resp.Header.Get("Content-Type"); {
	case resp.StatusCode == http.StatusAccepted:
		// A request answered with 202 got no answer (the client cancelled
		// it): record that, so that a script can expect it by its id.
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if !t.legacy && json.Unmarshal([]byte(msg), &m) == nil && m.Method != "" && len(m.ID) > 0 {
			t.c.add([]byte(fmt.Sprintf(`{"httpStatus":202,"id":%s}`, m.ID)))
		}
		close(headers)
	case resp.StatusCode == http.StatusOK && strings.HasPrefix(ct, "text/event-stream"):
		close(headers)
		readEvents(resp.Body, func(_ string, data []byte) { t.noteProtocol(data); t.c.add(data) })
	case resp.StatusCode == http.StatusOK:
		body, _ := io.ReadAll(resp.Body)
		t.noteProtocol(body)
		t.c.add(body)
		close(headers)
	default:
		body, _ := io.ReadAll(resp.Body)
		fmt.Printf("HTTP %d: %s\n", resp.StatusCode, strings.TrimSpace(string(body)))
		if v := resp.Header.Get("WWW-Authenticate"); v != "" {
			fmt.Printf("WWW-Authenticate: %s\n", v)
		}
		close(headers)
	}
}

// noteProtocol keeps the negotiated version for the MCP-Protocol-Version header.
func (t *httpTransport) noteProtocol(msg []byte) {
	var r struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if json.Unmarshal(msg, &r) == nil && r.Result.ProtocolVersion != "" {
		t.mu.Lock()
		t.protocol = r.Result.ProtocolVersion
		t.mu.Unlock()
	}
}

func (t *httpTransport) verb(name, rest string) error {
	switch name {
	case "header":
		k, v, _ := strings.Cut(rest, ":")
		t.mu.Lock()
		if v = strings.TrimSpace(os.ExpandEnv(v)); v == "" {
			delete(t.headers, k)
		} else {
			t.headers[k] = v
		}
		t.mu.Unlock()
	case "session":
		t.mu.Lock()
		t.session = strings.TrimPrefix(rest, "-")
		t.mu.Unlock()
	case "save-session":
		t.mu.Lock()
		defer t.mu.Unlock()
		return os.WriteFile(rest, []byte(t.session), 0o644)
	case "load-session":
		b, err := os.ReadFile(rest)
		t.mu.Lock()
		t.session = string(b)
		t.mu.Unlock()
		return err
	case "listen":
		req := t.newRequest(http.MethodGet, t.url, nil)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			fmt.Printf("HTTP %d\n", resp.StatusCode)
			return nil
		}
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			defer resp.Body.Close()
			readEvents(resp.Body, func(_ string, data []byte) { t.c.add(data) })
		}()
	case "listen-unread":
		// A client that opens its stream and then stops reading it: the
		// response stays open, unread, until the session ends.
		req := t.newRequest(http.MethodGet, t.url, nil)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			fmt.Printf("HTTP %d\n", resp.StatusCode)
			return nil
		}
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			<-t.ctx.Done()
			resp.Body.Close()
		}()
	case "load":
		var n, parallel int
		fields := strings.SplitN(rest, " ", 3)
		if len(fields) != 3 {
			return errors.New("load N PARALLEL JSON")
		}
		fmt.Sscan(fields[0], &n)
		fmt.Sscan(fields[1], &parallel)
		return t.load(n, parallel, fields[2])
	case "delete":
		resp, err := http.DefaultClient.Do(t.newRequest(http.MethodDelete, t.url, nil))
		if err != nil {
			return err
		}
		resp.Body.Close()
		fmt.Printf("HTTP %d\n", resp.StatusCode)
	default:
		return fmt.Errorf("unknown verb %q", name)
	}
	return nil
}

// load sends n copies of the request template, each with an id of its own
// ("load-1", … counting on across load lines), parallel at a time, and
// prints each answer as it arrives. It stops at the first request that
// gets no answer (the server went away).
func (t *httpTransport) load(n, parallel int, template string) error {
	var msg map[string]json.RawMessage
	if err := json.Unmarshal([]byte(template), &msg); err != nil {
		return err
	}
	base := t.loaded
	t.loaded += n
	ctx, cancel := context.WithCancel(t.ctx)
	defer cancel()
	next := make(chan int)
	go func() {
		defer close(next)
		for i := 1; i <= n; i++ {
			select {
			case next <- base + i:
			case <-ctx.Done():
				return
			}
		}
	}()
	var mu sync.Mutex // orders printing; guards firstErr
	var firstErr error
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for i := range next {
				answer, err := t.loadOne(ctx, msg, fmt.Sprintf("load-%d", i))
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				if err == nil {
					fmt.Println(string(answer))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return fmt.Errorf("load stopped: %v", firstErr)
	}
	return nil
}

// loadOne sends msg with id and returns its answer, canonical.
func (t *httpTransport) loadOne(ctx context.Context, msg map[string]json.RawMessage, id string) ([]byte, error) {
	m := maps.Clone(msg)
	m["id"], _ = json.Marshal(id)
	body, _ := json.Marshal(m)
	req := t.newRequest(http.MethodPost, t.url, body).WithContext(ctx)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	var answer []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		readEvents(resp.Body, func(_ string, data []byte) {
			if matches(data, "id", fmt.Sprintf("%q", id)) {
				answer = data
			}
		})
	} else {
		answer, _ = io.ReadAll(resp.Body)
	}
	if answer == nil {
		return nil, fmt.Errorf("no answer to %s", id)
	}
	return canonical(answer)
}

func (t *httpTransport) end() bool {
	t.cancel()
	t.wg.Wait()
	return true
}

// readEvents calls on for each event of an event stream (the server writes
// LF line ends; comments and other fields are skipped).
func readEvents(r io.Reader, on func(typ string, data []byte)) {
	br := bufio.NewReaderSize(r, 1<<20)
	typ, data := "message", []byte(nil)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if data != nil {
				on(typ, bytes.TrimSuffix(data, []byte("\n")))
			}
			typ, data = "message", nil
		case strings.HasPrefix(line, "event:"):
			typ = strings.TrimSpace(line[len("event:"):])
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(line[len("data:"):], " ")...)
			data = append(data, '\n')
		}
	}
}
