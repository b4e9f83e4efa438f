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
	noWait bool // send-seq: hundreds of requests sent at once, no answer waited for
	c      *client
	url    string // guarded by mu: a url line changes it
	legacy bool
	ctx    context.Context // ends the event streams
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu         sync.Mutex
	session    string
	protocol   string
	headers    map[string]string        // set by header lines, by canonical name
	suppressed map[string]bool          // modern: automatic headers a header line removed, by canonical name
	endpoint   string                   // legacy: where to POST
	loaded     int                      // requests sent by load lines, for their ids
	open       map[string]*post         // POSTs of requests whose answer is still coming, by canonical id: what drop closes
	toolParams map[string][]headerParam // x-mcp-header annotations of the tools listed, by tool name
}

// post is a request's POST in flight.
type post struct{ cancel context.CancelFunc }

func newHTTPTransport(c *client, rawURL string, legacy bool) (*httpTransport, error) {
	ctx, cancel := context.WithCancel(context.Background())
	t := &httpTransport{c: c, url: rawURL, legacy: legacy, ctx: ctx, cancel: cancel, headers: map[string]string{},
		suppressed: map[string]bool{}, open: map[string]*post{}, toolParams: map[string][]headerParam{}}
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

func (t *httpTransport) newRequest(ctx context.Context, method, target string, body []byte, mode headerMode) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	t.mu.Lock()
	defer t.mu.Unlock()
	modern := t.c.modern != nil && method == http.MethodPost && mode == autoHeaders
	switch {
	case mode == noHeaders:
	case modern:
		for k, v := range t.modernHeaders(body) {
			req.Header.Set(k, v)
		}
	default:
		if t.session != "" && !t.legacy {
			req.Header.Set("Mcp-Session-Id", t.session)
		}
		if t.protocol != "" && !t.legacy {
			req.Header.Set("MCP-Protocol-Version", t.protocol)
		}
	}
	for k, v := range t.headers {
		if strings.EqualFold(k, "Host") {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	if modern {
		for k := range t.suppressed {
			req.Header.Del(k)
		}
	}
	return req
}

// modernHeaders are the headers a conforming client sends with a modern
// POST (spec2026.md §6.2, §6.6): the version of the message's envelope,
// its method, the name it acts on and the tool arguments the tool's
// listed inputSchema mirrors into headers. t.mu held.
func (t *httpTransport) modernHeaders(body []byte) map[string]string {
	var m, params, meta map[string]json.RawMessage
	json.Unmarshal(body, &m)
	json.Unmarshal(m["params"], &params)
	json.Unmarshal(params["_meta"], &meta)
	h := map[string]string{"MCP-Protocol-Version": t.c.modern.version}
	var version, method string
	if json.Unmarshal(meta[metaProtocolVersion], &version) == nil && version != "" {
		h["MCP-Protocol-Version"] = version
	}
	if json.Unmarshal(m["method"], &method) == nil && method != "" {
		h["Mcp-Method"] = method
	}
	var name string
	if field, ok := nameHeaderSource[method]; ok && json.Unmarshal(params[field], &name) == nil {
		h["Mcp-Name"] = encodeHeaderValue(name)
	}
	if method == "tools/call" {
		for _, hp := range t.toolParams[name] {
			if v, ok := paramHeaderValue(argumentAt(params["arguments"], hp.path)); ok {
				h["Mcp-Param-"+hp.name] = v
			}
		}
	}
	return h
}

// learnTools keeps the x-mcp-header annotations of the tools in a
// tools/list answer, as a conforming client does to mirror arguments.
func (t *httpTransport) learnTools(msg []byte) {
	var m struct {
		Result struct {
			Tools []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tool := range m.Result.Tools {
		t.toolParams[tool.Name] = headerParams(tool.InputSchema)
	}
}

// headerSnapshot returns the headers set by header lines.
func (t *httpTransport) headerSnapshot() map[string]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.headers)
}

// target is where requests go: -url, or what a url line said since.
func (t *httpTransport) target() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.url
}

func (t *httpTransport) send(msg string, mode headerMode) error {
	target := t.target()
	if t.legacy {
		t.mu.Lock()
		target = t.endpoint
		t.mu.Unlock()
	}
	ctx, cancel := context.WithCancel(t.ctx)
	key, p := t.track(msg, cancel)
	req := t.newRequest(ctx, http.MethodPost, target, []byte(msg), mode)
	legacyRequest := mode == legacyHeaders || (mode == autoHeaders && t.c.modern == nil)
	if legacyRequest && strings.Contains(msg, `"method":"initialize"`) {
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
		defer t.untrack(key, p)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			close(headers)
			if ctx.Err() == nil {
				fmt.Printf("POST failed: %v\n", err)
			}
			return
		}
		t.answer(ctx, msg, resp, headers)
	}()
	if t.noWait {
		return nil
	}
	select {
	case <-headers:
	case <-time.After(200 * time.Millisecond):
	}
	return nil
}

// track notes the POST of a request, so that drop can close it.
func (t *httpTransport) track(msg string, cancel context.CancelFunc) (string, *post) {
	var m map[string]json.RawMessage
	json.Unmarshal([]byte(msg), &m)
	key, err := canonical(m["id"])
	p := &post{cancel: cancel}
	if _, isRequest := m["method"]; !isRequest || err != nil {
		return "", p
	}
	t.mu.Lock()
	t.open[string(key)] = p
	t.mu.Unlock()
	return string(key), p
}

// untrack forgets a POST that has ended.
func (t *httpTransport) untrack(key string, p *post) {
	p.cancel()
	t.mu.Lock()
	if t.open[key] == p {
		delete(t.open, key)
	}
	t.mu.Unlock()
}

// drop closes the POST of request id: how a modern client cancels it.
func (t *httpTransport) drop(id string) error {
	key, err := canonical([]byte(id))
	if err != nil {
		return fmt.Errorf("drop: the id is JSON, as in expect id=ID, not %s", id)
	}
	t.mu.Lock()
	p := t.open[string(key)]
	t.mu.Unlock()
	if p == nil {
		return fmt.Errorf("drop: no POST of id %s is open", key)
	}
	p.cancel()
	return nil
}

// received handles a message that arrived on a POST's answer.
func (t *httpTransport) received(msg []byte) {
	t.noteProtocol(msg)
	t.learnTools(msg)
	t.c.add(msg)
}

// answer handles a POST's answer; headers is closed once what must happen
// before the next session line (printing an error status, noting the
// session) has happened. Once ctx ends (drop), nothing more is read.
func (t *httpTransport) answer(ctx context.Context, msg string, resp *http.Response, headers chan struct{}) {
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
		readEvents(resp.Body, func(_ string, data []byte) {
			if ctx.Err() == nil {
				t.received(data)
			}
		})
	case resp.StatusCode == http.StatusOK:
		body, err := io.ReadAll(resp.Body)
		if err == nil || ctx.Err() == nil {
			t.received(body)
		}
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
		k = http.CanonicalHeaderKey(strings.TrimSpace(k))
		t.mu.Lock()
		switch v = strings.TrimSpace(os.ExpandEnv(v)); v {
		case "auto":
			delete(t.headers, k)
			delete(t.suppressed, k)
		case "":
			delete(t.headers, k)
			if t.c.modern != nil {
				t.suppressed[k] = true
			}
		default:
			t.headers[k] = v
			delete(t.suppressed, k)
		}
		t.mu.Unlock()
	case "drop":
		return t.drop(rest)
	case "url":
		u := os.ExpandEnv(rest)
		if err := waitHealthy(u, t.c.timeout); err != nil {
			return err
		}
		t.mu.Lock()
		t.url = u
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
		req := t.newRequest(t.ctx, http.MethodGet, t.target(), nil, autoHeaders)
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
		req := t.newRequest(t.ctx, http.MethodGet, t.target(), nil, autoHeaders)
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
		resp, err := http.DefaultClient.Do(t.newRequest(t.ctx, http.MethodDelete, t.target(), nil, autoHeaders))
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
	if err := json.Unmarshal([]byte(t.c.prepare(template, false)), &msg); err != nil {
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
	req := t.newRequest(ctx, http.MethodPost, t.target(), body, autoHeaders)
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
