package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// clusterload drives clients through a load balancer in front of mcpgate
// replicas while the script kills and restarts them, and checks that no
// answer is lost or wrong:
//
//	clusterload -url URL [-legacy N] [-modern M] [-tool NAME] [-phases P1,P2,...] -stop FILE
//
// Each legacy client (2025-11-25 sessions) and each modern one (2026-07-28,
// no session) calls the tool in a loop, each call with an argument of its
// own ({"call": "L1-7"}), and checks that the answer echoes it (the
// fakeupstream's default answer "server/tool {args}"): someone else's
// answer counts as wrong. A legacy client whose session is unknown (404)
// initialises a new one and calls again. A call that got no answer (the
// balancer's 502 or 503, no connection) is retried: the replica it went to
// died, or never took it. When file P of -phases appears, the counts are
// noted (P.started is written then), and P.ok is written once every client
// has had 3 more answers: every client recovered. At FILE -stop, it prints
// per phase (before the first is "start"): answered, wrong, errors (a
// JSON-RPC error, as a call cut by a shutdown gets), lost (the balancer's
// 502, or an event stream that ended without the answer: a request that a
// replica took and never answered), refused (another status, or no
// connection), reinitialised; and exits 1 if any answer was wrong.
func clusterLoadMain(args []string) int {
	fs := flag.NewFlagSet("clusterload", flag.ContinueOnError)
	url := fs.String("url", "", "the balancer's MCP URL")
	legacy := fs.Int("legacy", 2, "legacy clients (sessions)")
	modern := fs.Int("modern", 2, "modern clients (no session)")
	tool := fs.String("tool", "tools__echo", "the tool to call")
	phases := fs.String("phases", "", "comma-separated files that start the next phase when they appear")
	stop := fs.String("stop", "", "file that ends the run")
	if err := fs.Parse(args); err != nil || *url == "" || *stop == "" {
		fmt.Fprintln(os.Stderr, "usage: clusterload -url URL [-legacy N] [-modern M] [-tool NAME] [-phases P,...] -stop FILE")
		return 2
	}
	run := &loadRun{url: *url, tool: *tool, phase: "start"}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range *legacy + *modern {
		c := &loadClient{run: run, name: fmt.Sprintf("L%d", i+1), legacy: i < *legacy}
		if !c.legacy {
			c.name = fmt.Sprintf("M%d", i+1-*legacy)
		}
		run.clients = append(run.clients, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.loop(ctx)
		}()
	}
	var names []string
	if *phases != "" {
		names = strings.Split(*phases, ",")
	}
	for _, p := range names {
		waitForFile(context.Background(), p)
		run.startPhase(p)
		os.WriteFile(p+".started", nil, 0o644)
		if !run.awaitRecovery(p, 3, 15*time.Second) {
			fmt.Fprintf(os.Stderr, "clusterload: not every client recovered after %s\n", p)
			for _, c := range run.clients {
				c.mu.Lock()
				fmt.Fprintf(os.Stderr, "clusterload %s: %d answers since, last: %s\n", c.name, c.answered-c.marked, c.last)
				c.mu.Unlock()
			}
		} else {
			os.WriteFile(p+".ok", nil, 0o644)
		}
	}
	waitForFile(context.Background(), *stop)
	cancel()
	wg.Wait()
	wrong := run.report(os.Stdout)
	if wrong > 0 {
		return 1
	}
	return 0
}

type loadRun struct {
	url, tool string
	clients   []*loadClient

	mu     sync.Mutex
	phase  string
	order  []string
	counts map[string]*loadCounts
}

type loadCounts struct{ answered, wrong, errors, lost, refused, reinit int }

func (r *loadRun) count(f func(*loadCounts)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.counts == nil {
		r.counts = map[string]*loadCounts{}
	}
	c := r.counts[r.phase]
	if c == nil {
		c = &loadCounts{}
		r.counts[r.phase] = c
		r.order = append(r.order, r.phase)
	}
	f(c)
}

func (r *loadRun) startPhase(p string) {
	r.mu.Lock()
	r.phase = p
	r.mu.Unlock()
	for _, c := range r.clients {
		c.mark()
	}
}

// awaitRecovery waits until every client has had n answers since the phase began.
func (r *loadRun) awaitRecovery(p string, n int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		all := true
		for _, c := range r.clients {
			all = all && c.sinceMark() >= n
		}
		if all {
			return true
		}
		time.Sleep(10 * time.Millisecond) // polling the clients' counts
	}
	return false
}

func (r *loadRun) report(w io.Writer) (wrong int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.order {
		c := r.counts[p]
		fmt.Fprintf(w, "%s: answered>0=%v wrong=%d errors=%d lost=%d refused>0=%v reinitialised>0=%v\n", p, c.answered > 0, c.wrong, c.errors, c.lost, c.refused > 0, c.reinit > 0)
		fmt.Fprintf(os.Stderr, "clusterload %s: answered %d, wrong %d, errors %d, lost %d, refused %d, reinitialised %d\n", p, c.answered, c.wrong, c.errors, c.lost, c.refused, c.reinit)
		wrong += c.wrong
	}
	return wrong
}

type loadClient struct {
	run    *loadRun
	name   string
	legacy bool

	session string
	calls   int

	mu       sync.Mutex
	answered int
	marked   int
	last     string // what it did last, for a report of clients left behind
}

func (c *loadClient) note(format string, args ...any) {
	c.mu.Lock()
	c.last = time.Now().Format("15:04:05.000 ") + fmt.Sprintf(format, args...)
	c.mu.Unlock()
}

func (c *loadClient) mark() {
	c.mu.Lock()
	c.marked = c.answered
	c.mu.Unlock()
}

func (c *loadClient) sinceMark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.answered - c.marked
}

// errNoSession: the session is unknown where the request went (404).
var errNoSession = errors.New("unknown session")

func (c *loadClient) loop(ctx context.Context) {
	for ctx.Err() == nil {
		c.calls++
		arg := fmt.Sprintf("%s-%d", c.name, c.calls)
		for ctx.Err() == nil {
			if c.legacy && c.session == "" {
				if err := c.initialize(ctx); err != nil {
					c.run.count(func(n *loadCounts) { n.refused++ })
					fmt.Fprintf(os.Stderr, "clusterload %s: %v\n", c.name, err)
					pause(ctx)
					continue
				}
			}
			c.note("calling %s on session %q", arg, c.session)
			status, text, rpcErr, err := c.call(ctx, arg)
			if ctx.Err() != nil {
				return
			}
			c.note("%s: status %d, error %q %v", arg, status, rpcErr, err)
			switch {
			case status == http.StatusNotFound && c.legacy:
				c.session = ""
				c.run.count(func(n *loadCounts) { n.reinit++ })
				continue
			case status == http.StatusBadGateway:
				c.run.count(func(n *loadCounts) { n.lost++ })
				fmt.Fprintf(os.Stderr, "clusterload %s: %s lost (%v) on session %q\n", c.name, arg, err, c.session)
				pause(ctx)
				continue
			case err != nil || status != http.StatusOK:
				c.run.count(func(n *loadCounts) { n.refused++ })
				fmt.Fprintf(os.Stderr, "clusterload %s: %s refused: status %d %v\n", c.name, arg, status, err)
				pause(ctx)
				continue
			case rpcErr != "":
				c.run.count(func(n *loadCounts) { n.errors++ })
				fmt.Fprintf(os.Stderr, "clusterload %s: %s got an error: %s\n", c.name, arg, rpcErr)
				pause(ctx)
				continue
			case text != strings.Replace(c.run.tool, "__", "/", 1)+` {"call":"`+arg+`"}`:
				c.run.count(func(n *loadCounts) { n.wrong++ })
				fmt.Fprintf(os.Stderr, "clusterload %s: %s got someone else's answer: %s\n", c.name, arg, text)
			default:
				c.run.count(func(n *loadCounts) { n.answered++ })
				c.mu.Lock()
				c.answered++
				c.mu.Unlock()
			}
			break
		}
	}
}

// pause paces a retry after a refusal: a client's backoff, not a wait for an event.
func pause(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(20 * time.Millisecond):
	}
}

func (c *loadClient) initialize(ctx context.Context) error {
	c.note("initializing")
	status, hdr, _, err := c.post(ctx, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"clusterload","version":"1"}}}`, nil)
	if err != nil || status != http.StatusOK || hdr.Get("Mcp-Session-Id") == "" {
		return fmt.Errorf("initialize: status %d: %v", status, err)
	}
	c.session = hdr.Get("Mcp-Session-Id")
	status, _, _, err = c.post(ctx, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
	if err != nil || status != http.StatusAccepted {
		c.session = ""
		return fmt.Errorf("initialized: status %d: %v", status, err)
	}
	return nil
}

// call makes one tools/call and returns the answer's text or error.
func (c *loadClient) call(ctx context.Context, arg string) (status int, text, rpcErr string, err error) {
	params := map[string]any{"name": c.run.tool, "arguments": map[string]string{"call": arg}}
	headers := map[string]string{}
	if !c.legacy {
		params["_meta"] = map[string]any{metaProtocolVersion: modernVersion, metaClientCaps: map[string]any{}, metaClientInfo: map[string]string{"name": "clusterload", "version": "1"}}
		headers["Mcp-Method"] = "tools/call"
		headers["Mcp-Name"] = c.run.tool
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	status, _, answer, err := c.post(ctx, string(body), headers)
	if err != nil || status != http.StatusOK {
		return status, "", "", err
	}
	var m struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
		Error *struct{ Message string } `json:"error"`
	}
	if json.Unmarshal(answer, &m) != nil {
		return status, "", "", fmt.Errorf("not JSON: %q", answer)
	}
	if m.Error != nil {
		return status, "", m.Error.Message, nil
	}
	if len(m.Result.Content) > 0 {
		text = m.Result.Content[0].Text
	}
	return status, text, "", nil
}

// post sends one message and returns the answer to a request (from JSON or
// from the event stream).
func (c *loadClient) post(ctx context.Context, body string, headers map[string]string) (int, http.Header, []byte, error) {
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(rctx, http.MethodPost, c.run.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.legacy {
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		if c.session != "" {
			req.Header.Set("Mcp-Session-Id", c.session)
		}
	} else {
		req.Header.Set("MCP-Protocol-Version", modernVersion)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return resp.StatusCode, resp.Header, nil, nil
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, resp.Header, b, err
	}
	var answer []byte
	readEvents(resp.Body, func(_ string, data []byte) {
		if answer == nil && bytes.Contains(data, []byte(`"id"`)) && !bytes.Contains(data, []byte(`"method"`)) {
			answer = bytes.Clone(data)
		}
	})
	if answer == nil {
		// The stream ended without the answer: the replica went away mid-call.
		return http.StatusBadGateway, resp.Header, nil, errors.New("the event stream ended without the answer")
	}
	return resp.StatusCode, resp.Header, answer, nil
}
