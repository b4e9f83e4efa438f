package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// fakeSpec drives fakeupstream: what it offers and how it misbehaves.
type fakeSpec struct {
	Name         string            `json:"name"`         // serverInfo.name
	Protocol     string            `json:"protocol"`     // the protocolVersion it answers; default 2025-11-25
	Instructions string            `json:"instructions"` // initialize instructions
	Capabilities json.RawMessage   `json:"capabilities"` // default: derived from what it lists
	Tools        []fakeTool        `json:"tools"`
	Prompts      []fakePrompt      `json:"prompts"`
	Resources    []fakeResource    `json:"resources"`
	Templates    []json.RawMessage `json:"templates"`
	PageSize     int               `json:"page_size"`            // split lists into pages of this size
	Log          string            `json:"log"`                  // append every message received to this file
	PIDFile      string            `json:"pidfile"`              // write our pid here
	PIDLog       string            `json:"pid_log"`              // append our pid to this file, a line per start
	ChildPIDFile string            `json:"child_pidfile"`        // start a grandchild that sleeps; write its pid here
	SetsidChild  string            `json:"setsid_child_pidfile"` // the same, in a session of its own (it leaves our process group)
	ExitAtStart  string            `json:"exit_at_start"`        // print this to stderr and exit 1 at once
	IgnoreEOF    bool              `json:"ignore_eof"`           // keep running after stdin closes (until signalled)
	IgnoreTERM   bool              `json:"ignore_term"`          // ignore SIGTERM too
	NoInitialize bool              `json:"no_initialize"`        // never answer initialize
	BeforeInit   string            `json:"before_initialize"`    // legacy era: what a request before initialize gets: "" (served), "silence" (never answered), "exit" (the process exits 1)
	InitWaitFile string            `json:"init_wait_for_file"`   // answer initialize only once this file exists
	InitDelay    string            `json:"init_delay"`           // wait this long before answering initialize (a server slow to start, for benchmarks)
	Garbage      bool              `json:"garbage"`              // write a non-JSON line before each answer
	ListDelay    string            `json:"list_delay"`           // wait this long before answering tools/list
	AskAtStart   *fakeAsk          `json:"ask_at_start"`         // send this request to the client once initialized
	StartsLog    string            `json:"starts_log"`           // append a line here each time the server starts
	HTTP         fakeHTTPOptions   `json:"http"`                 // how -http serves (fakehttp_test.go)

	// The modern era (fakemodern_test.go, and fakehttpmodern_test.go for -http).
	Era            string                   `json:"era"`             // "legacy" (default), "modern" (2026-07-28 only) or "dual"
	ModernVersions []string                 `json:"modern_versions"` // the modern versions served: discover's supportedVersions, -32022's supported (default ["2026-07-28"])
	TTLMS          int                      `json:"ttl_ms"`          // ttlMs of cacheable modern results: discover, the lists, resources/read (default 0)
	CacheScope     string                   `json:"cache_scope"`     // their cacheScope: "public" or "private" (default)
	CacheByMethod  map[string]fakeCacheHint `json:"cache_by_method"` // per method ("tools/list", "server/discover", …): {"ttl_ms": N, "cache_scope": S} overriding the two
	BareResults    bool                     `json:"bare_results"`    // modern results carry no resultType, serverInfo or caching hints (an early draft's server)
}

// fakeTool is a tool plus what calling it does ("do" is not listed).
type fakeTool struct {
	Raw json.RawMessage
	Do  fakeBehaviour
}

// fakeBehaviour is what calling a tool does. To a modern request (era
// modern or dual), notify and update go to the subscriptions/listen streams
// that asked for them (fakelisten_test.go), log_message and log_burst only
// when the request's _meta has a logLevel that admits info, and progress
// uses _meta.progressToken as before. ask still sends its request on stdio
// (a server breaking the modern rule); over -http it is an error.
type fakeBehaviour struct {
	Text             string          `json:"text"`               // answer with this text (default: echo the arguments)
	Result           json.RawMessage `json:"result"`             // answer with exactly this result
	Error            json.RawMessage `json:"error"`              // answer with this JSON-RPC error
	WaitForFile      string          `json:"wait_for_file"`      // do not answer until this file exists
	StartedFile      string          `json:"started_file"`       // create this file as soon as the call arrives
	StopReading      bool            `json:"stop_reading"`       // stop reading stdin for good (a server busy in one long call), then go on
	TextBytes        int             `json:"text_bytes"`         // answer with a text of this many bytes: text, if given, then "x" up to it
	TextAfter        string          `json:"text_after"`         // with text_bytes: then this text, after the "x"s
	RawAnswer        string          `json:"raw_answer"`         // answer with this line as written, {{id}} replaced by the request's id (a broken answer); over -http, as the one event of the call's stream
	AskCount         int             `json:"ask_count"`          // with ask: send it this many times at once; answer with how many were refused
	AskRefusals      int             `json:"ask_refusals"`       // with ask_count: answer once this many were refused (or after 10s)
	Progress         int             `json:"progress"`           // send this many progress notifications first
	ProgressGap      string          `json:"progress_gap"`       // wait this long before each progress notification
	Work             string          `json:"work"`               // take this long to answer (a tool doing work, for benchmarks)
	Crash            bool            `json:"crash"`              // exit 3 instead of answering
	Notify           string          `json:"notify"`             // send this notification (method) before answering
	NotifyCount      int             `json:"notify_count"`       // send it this many times, in one write (a burst)
	NotifyAfter      *fakeNotify     `json:"notify_after"`       // send this notification after the ask was answered
	ProgressAfterAsk int             `json:"progress_after_ask"` // send this many progress notifications after the ask was answered
	AddTool          *fakeTool       `json:"add_tool"`           // add this tool to the list first
	AwaitList        bool            `json:"await_list"`         // after notify, answer only once tools/list was served
	Ask              *fakeAsk        `json:"ask"`                // send this request to the client; answer with what came back
	Update           string          `json:"update"`             // send notifications/resources/updated for this URI first
	AwaitAsk         bool            `json:"await_ask"`          // answer with the outcome of ask_at_start, once it is known
	LogMessage       string          `json:"log_message"`        // send notifications/message with this text first
	Stderr           string          `json:"stderr"`             // write this to stderr first, as is (no newline added)
	StderrTimes      int             `json:"stderr_times"`       // write it this many times (default once): a flood
	LogBurst         *fakeBurst      `json:"log_burst"`          // send this many large notifications/message first
	// Input: rounds of multi-round-trip input before the answer
	// (fakeinput_test.go). Prompts and resources take it too, in their "do".
	Input      []fakeRound `json:"input"`
	EndListens bool        `json:"end_listens"` // end every open subscriptions/listen first, from the server's side
	// A server that goes on with a call its client gave up on (it may
	// still ask about it): the cancellation is noted, not obeyed.
	IgnoreCancel  bool   `json:"ignore_cancel"`   // go on when the call is cancelled
	CancelledFile string `json:"cancelled_file"`  // with ignore_cancel: create this file when the cancellation comes
	AskResultFile string `json:"ask_result_file"` // with ask: write what came back to this file too (an answer nobody waits for any more)
}

// fakeBurst is a burst of large messages.
type fakeBurst struct {
	Count int `json:"count"`
	Bytes int `json:"bytes"` // the size of each message's data
}

// fakeNotify is a notification with params.
type fakeNotify struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// fakeAsk is a request from the server to the client (sampling, elicitation, roots).
type fakeAsk struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

func (t *fakeTool) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	if do, ok := m["do"]; ok {
		if err := json.Unmarshal(do, &t.Do); err != nil {
			return fmt.Errorf("do: %v", err)
		}
		delete(m, "do")
	}
	if _, ok := m["inputSchema"]; !ok {
		m["inputSchema"] = json.RawMessage(`{"type":"object"}`)
	}
	raw, err := json.Marshal(m)
	t.Raw = raw
	return err
}

type fakeResource struct {
	Raw  json.RawMessage
	URI  string
	Text string
	Do   fakeBehaviour // only input and error are honoured
}

func (r *fakeResource) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	json.Unmarshal(m["uri"], &r.URI)
	json.Unmarshal(m["text"], &r.Text)
	if do, ok := m["do"]; ok {
		if err := json.Unmarshal(do, &r.Do); err != nil {
			return fmt.Errorf("do: %v", err)
		}
	}
	delete(m, "text")
	delete(m, "do")
	raw, err := json.Marshal(m)
	r.Raw = raw
	return err
}

// fakePrompt is a prompt plus what getting it does ("do", not listed; only
// input is honoured).
type fakePrompt struct {
	Raw  json.RawMessage
	Name string
	Do   fakeBehaviour
}

func (p *fakePrompt) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	json.Unmarshal(m["name"], &p.Name)
	if do, ok := m["do"]; ok {
		if err := json.Unmarshal(do, &p.Do); err != nil {
			return fmt.Errorf("do: %v", err)
		}
	}
	delete(m, "do")
	raw, err := json.Marshal(m)
	p.Raw = raw
	return err
}

func fakeUpstreamMain(args []string) int {
	if len(args) == 1 && args[0] == "-sleep" {
		time.Sleep(time.Hour)
		return 0
	}
	if len(args) == 3 && args[0] == "-http" {
		return fakeHTTPMain(args[1], args[2])
	}
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: fakeupstream SPEC.json\n       fakeupstream -http URLFILE SPEC.json")
		return 2
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeupstream:", err)
		return 2
	}
	var spec fakeSpec
	if err := json.Unmarshal(data, &spec); err == nil {
		err = spec.check()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fakeupstream: %s: %v\n", args[0], err)
		return 2
	}
	if spec.StartsLog != "" {
		if f, err := os.OpenFile(spec.StartsLog, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err == nil {
			fmt.Fprintln(f, "started", os.Getpid())
			f.Close()
		}
	}
	if spec.ExitAtStart != "" {
		fmt.Fprintln(os.Stderr, spec.ExitAtStart)
		return 1
	}
	if spec.PIDFile != "" {
		os.WriteFile(spec.PIDFile, []byte(fmt.Sprint(os.Getpid())), 0o644)
	}
	if spec.PIDLog != "" {
		if f, err := os.OpenFile(spec.PIDLog, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err == nil {
			fmt.Fprintln(f, os.Getpid())
			f.Close()
		}
	}
	if spec.ChildPIDFile != "" {
		startSleeper(spec.ChildPIDFile, false)
	}
	if spec.SetsidChild != "" {
		startSleeper(spec.SetsidChild, true)
	}
	if spec.IgnoreTERM {
		ignoreTERM()
	}
	f := newFake(spec)
	f.conn = jsonrpc.NewConn(jsonrpc.NewLineStream(loggingReader{f}, plainWriter{os.Stdout}, nil, 0), jsonrpc.Options{Handler: f})
	f.conn.Start()
	<-f.conn.Done()
	if spec.IgnoreEOF {
		time.Sleep(time.Hour) // until a signal ends us
	}
	f.conn.Wait(context.Background())
	return 0
}

// startSleeper starts a child that sleeps (a server's helper process) and
// writes its pid to pidfile; setsid puts it in a session of its own, out
// of reach of a signal to our process group.
func startSleeper(pidfile string, setsid bool) {
	self, _ := os.Executable()
	child := exec.Command(self, "-sleep")
	child.Args[0] = "fakeupstream"
	child.SysProcAttr = sleeperProcAttr(setsid)
	if err := child.Start(); err == nil {
		os.WriteFile(pidfile, []byte(fmt.Sprint(child.Process.Pid)), 0o644)
	}
}

type fake struct {
	spec        fakeSpec
	conn        *jsonrpc.Conn // nil over -http
	deaf        atomic.Bool   // stop_reading: stdin is never read again
	legacyOpen  atomic.Bool   // dual: initialize has opened a legacy stdio session
	initialized atomic.Bool   // initialize has come (before_initialize)
	logMu       sync.Mutex
	mu          sync.Mutex    // guards spec.Tools, which add_tool changes, and listens
	listens     []*fakeListen // open subscriptions/listen streams

	listed chan struct{} // 1-buffered: poked each time tools/list is served

	asked     chan struct{} // closed when ask_at_start has its answer
	askResult string
}

func newFake(spec fakeSpec) *fake {
	return &fake{spec: spec, listed: make(chan struct{}, 1), asked: make(chan struct{})}
}

// loggingReader copies everything the fake receives to spec.Log.
type loggingReader struct{ f *fake }

func (r loggingReader) Read(p []byte) (int, error) {
	if r.f.deaf.Load() {
		select {} // until a signal ends us
	}
	n, err := os.Stdin.Read(p)
	if n > 0 && r.f.spec.Log != "" {
		r.f.logMu.Lock()
		if lf, err := os.OpenFile(r.f.spec.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err == nil {
			lf.Write(p[:n])
			lf.Close()
		}
		r.f.logMu.Unlock()
	}
	return n, err
}

func (f *fake) Handle(ctx context.Context, msg *jsonrpc.Message) (json.RawMessage, error) {
	if f.spec.Garbage && msg.IsRequest() && msg.Method != "initialize" {
		// A non-JSON line, a response to a request never made, and a line
		// over any sane limit: a gateway must skip all three.
		os.Stdout.WriteString("this is not JSON\n" +
			`{"jsonrpc":"2.0","id":99999,"result":{}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + strings.Repeat("x", 5000) + `"}}` + "\n")
	}
	if f.era() == eraLegacy && msg.IsRequest() && msg.Method != "initialize" && !f.initialized.Load() {
		switch f.spec.BeforeInit {
		case "silence":
			<-ctx.Done()
			return nil, ctx.Err()
		case "exit":
			fmt.Fprintln(os.Stderr, "fakeupstream: a request before initialize; exiting")
			os.Exit(1)
		}
	}
	if msg.Method == "initialize" {
		f.initialized.Store(true)
	}
	if raw := f.rawAnswer(msg); raw != "" {
		os.Stdout.WriteString(strings.ReplaceAll(raw, "{{id}}", msg.ID.String()) + "\n")
		<-ctx.Done() // the answer was given
		return nil, ctx.Err()
	}
	if f.era() != eraLegacy && msg.IsRequest() {
		if modernClaim(msg.Params) {
			return f.handleModern(ctx, msg)
		}
		if f.era() == eraModern {
			return nil, f.refuseLegacy(msg)
		}
	}
	if msg.Method == "initialize" && f.era() == eraDual {
		f.legacyOpen.Store(true)
	}
	return f.serve(ctx, msg)
}

// serve answers what both eras serve alike; envelopeFrom(ctx) tells a
// modern request.
func (f *fake) serve(ctx context.Context, msg *jsonrpc.Message) (json.RawMessage, error) {
	switch msg.Method {
	case "initialize":
		if f.spec.NoInitialize {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		if err := waitForFile(ctx, f.spec.InitWaitFile); err != nil {
			return nil, err
		}
		if d, err := time.ParseDuration(f.spec.InitDelay); err == nil {
			time.Sleep(d) // simulates a server slow to start (npx), for benchmarks
		}
		return f.initialize(), nil
	case "ping":
		return json.RawMessage(`{}`), nil
	case "tools/list":
		if d, err := time.ParseDuration(f.spec.ListDelay); err == nil {
			time.Sleep(d) // simulates a slow server, for benchmarks
		}
		f.mu.Lock()
		raws := make([]json.RawMessage, len(f.spec.Tools))
		for i, t := range f.spec.Tools {
			raws[i] = t.Raw
		}
		f.mu.Unlock()
		defer func() {
			select {
			case f.listed <- struct{}{}:
			default:
			}
		}()
		return f.page("tools", raws, msg.Params)
	case "prompts/list":
		raws := make([]json.RawMessage, len(f.spec.Prompts))
		for i, p := range f.spec.Prompts {
			raws[i] = p.Raw
		}
		return f.page("prompts", raws, msg.Params)
	case "resources/list":
		raws := make([]json.RawMessage, len(f.spec.Resources))
		for i, r := range f.spec.Resources {
			raws[i] = r.Raw
		}
		return f.page("resources", raws, msg.Params)
	case "resources/templates/list":
		return f.page("resourceTemplates", f.spec.Templates, msg.Params)
	case "tools/call":
		return f.callTool(ctx, msg.Params)
	case "prompts/get":
		var p struct {
			Name      string            `json:"name"`
			Arguments map[string]string `json:"arguments"`
		}
		json.Unmarshal(msg.Params, &p)
		text := fmt.Sprintf("%s prompt %s %v", f.spec.Name, p.Name, p.Arguments)
		for _, pr := range f.spec.Prompts {
			if pr.Name == p.Name && len(pr.Do.Input) > 0 {
				res, echo, err := f.serveInput(ctx, msg.Method, p.Name, pr.Do.Input, msg.Params, f.askClient())
				if err != nil || res != nil {
					return res, err
				}
				text = echo
			}
		}
		return mustMarshal(map[string]any{"messages": []any{map[string]any{"role": "user", "content": map[string]string{"type": "text", "text": text}}}}), nil
	case "resources/read":
		var p struct {
			URI string `json:"uri"`
		}
		json.Unmarshal(msg.Params, &p)
		text := fmt.Sprintf("%s read %s", f.spec.Name, p.URI)
		for _, r := range f.spec.Resources {
			if r.URI == p.URI && r.Text != "" {
				text = r.Text
			}
			if r.URI == p.URI && r.Do.Error != nil {
				var e jsonrpc.Error
				json.Unmarshal(r.Do.Error, &e)
				return nil, &e
			}
			if r.URI == p.URI && len(r.Do.Input) > 0 {
				res, echo, err := f.serveInput(ctx, msg.Method, p.URI, r.Do.Input, msg.Params, f.askClient())
				if err != nil || res != nil {
					return res, err
				}
				text = echo
			}
		}
		return mustMarshal(map[string]any{"contents": []any{map[string]string{"uri": p.URI, "text": text}}}), nil
	case "completion/complete":
		return mustMarshal(map[string]any{"completion": map[string]any{"values": []string{f.spec.Name + ":" + string(msg.Params)}}}), nil
	case "logging/setLevel", "resources/subscribe", "resources/unsubscribe":
		return json.RawMessage(`{}`), nil
	case "notifications/initialized":
		if a := f.spec.AskAtStart; a != nil {
			go func() {
				res, err := f.conn.Call(context.Background(), a.Method, a.Params)
				f.askResult = "client answered: " + string(res)
				if err != nil {
					f.askResult = "client failed: " + err.Error()
				}
				close(f.asked)
			}()
		}
	case "notifications/cancelled":
		var p struct {
			RequestID jsonrpc.ID `json:"requestId"`
		}
		json.Unmarshal(msg.Params, &p)
		f.conn.CancelIncoming(p.RequestID)
	}
	if msg.IsRequest() {
		return nil, fmt.Errorf("%w: %s", jsonrpc.ErrMethodNotFound, msg.Method)
	}
	return nil, nil
}

func (f *fake) initialize() json.RawMessage {
	caps := f.capabilities()
	protocol := f.spec.Protocol
	if protocol == "" {
		protocol = "2025-11-25"
	}
	res := map[string]any{
		"protocolVersion": protocol,
		"capabilities":    caps,
		"serverInfo":      map[string]string{"name": f.spec.Name, "version": "1.0.0"},
	}
	if f.spec.Instructions != "" {
		res["instructions"] = f.spec.Instructions
	}
	return mustMarshal(res)
}

// page serves a list, split into pages when page_size is set; the cursor
// is the index of the next item.
func (f *fake) page(key string, items []json.RawMessage, params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Cursor string `json:"cursor"`
	}
	json.Unmarshal(params, &p)
	start := 0
	if p.Cursor != "" {
		if _, err := fmt.Sscanf(p.Cursor, "%d", &start); err != nil || start > len(items) {
			return nil, fmt.Errorf("%w: bad cursor %q", jsonrpc.ErrInvalidParams, p.Cursor)
		}
	}
	end := len(items)
	if f.spec.PageSize > 0 {
		end = min(start+f.spec.PageSize, len(items))
	}
	res := map[string]any{key: append([]json.RawMessage{}, items[start:end]...)}
	if end < len(items) {
		res["nextCursor"] = fmt.Sprint(end)
	}
	return mustMarshal(res), nil
}

func (f *fake) callTool(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	json.Unmarshal(params, &p)
	var tool *fakeTool
	f.mu.Lock()
	for i := range f.spec.Tools {
		var t struct {
			Name string `json:"name"`
		}
		json.Unmarshal(f.spec.Tools[i].Raw, &t)
		if t.Name == p.Name {
			tool = &f.spec.Tools[i]
		}
	}
	f.mu.Unlock()
	if tool == nil {
		return nil, fmt.Errorf("%w: %s has no tool %q", jsonrpc.ErrInvalidParams, f.spec.Name, p.Name)
	}
	do := tool.Do
	if do.IgnoreCancel {
		if do.CancelledFile != "" {
			context.AfterFunc(ctx, func() { os.WriteFile(do.CancelledFile, nil, 0o644) })
		}
		ctx = context.WithoutCancel(ctx)
	}
	if do.StopReading {
		f.deaf.Store(true)
	}
	if do.StartedFile != "" {
		os.WriteFile(do.StartedFile, nil, 0o644)
	}
	if do.Stderr != "" {
		writeRepeated(os.Stderr, do.Stderr, max(1, do.StderrTimes))
	}
	if do.Crash {
		fmt.Fprintf(os.Stderr, "%s: crashing as told\n", f.spec.Name)
		os.Exit(3)
	}
	if err := waitForFile(ctx, do.WaitForFile); err != nil {
		return nil, err
	}
	if do.AddTool != nil {
		f.mu.Lock()
		f.spec.Tools = append(f.spec.Tools, *do.AddTool)
		f.mu.Unlock()
	}
	if do.EndListens {
		f.endListens()
	}
	env := envelopeFrom(ctx)
	if do.Notify != "" {
		select {
		case <-f.listed: // forget earlier lists
		default:
		}
		if f.era() == eraLegacy {
			line := `{"jsonrpc":"2.0","method":"` + do.Notify + `"}` + "\n"
			os.Stdout.WriteString(strings.Repeat(line, max(1, do.NotifyCount)))
		} else {
			f.announce(ctx, do.Notify, nil, max(1, do.NotifyCount))
		}
		if do.AwaitList {
			select {
			case <-f.listed:
			case <-time.After(10 * time.Second):
				return nil, fmt.Errorf("%w: no tools/list came after %s", jsonrpc.ErrInternal, do.Notify)
			}
		}
	}
	if d, err := time.ParseDuration(do.Work); err == nil {
		time.Sleep(d) // the tool's own work: what a benchmark measures against
	}
	if do.AwaitAsk {
		select {
		case <-f.asked:
			return mustMarshal(map[string]any{"content": []any{map[string]string{"type": "text", "text": f.askResult}}}), nil
		case <-time.After(10 * time.Second):
			return nil, fmt.Errorf("%w: ask_at_start got no answer", jsonrpc.ErrInternal)
		}
	}
	if do.Update != "" {
		updated := mustMarshal(map[string]string{"uri": do.Update})
		if f.era() == eraLegacy {
			f.conn.Notify(ctx, "notifications/resources/updated", updated)
		} else {
			f.announce(ctx, "notifications/resources/updated", updated, 1)
		}
	}
	if do.Ask != nil && f.conn == nil {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInternal, "%s: ask is a legacy request to the client; over -http a modern request gets none (use input)", p.Name)
	}
	if do.Ask != nil && do.AskCount > 0 {
		return f.flood(ctx, do)
	}
	if do.Ask != nil {
		res, err := f.conn.Call(ctx, do.Ask.Method, do.Ask.Params)
		text := "client answered: " + string(res)
		if err != nil {
			text = "client failed: " + err.Error()
		}
		if do.AskResultFile != "" {
			// Whole when it appears: a script waits for the file, then reads it.
			os.WriteFile(do.AskResultFile+".tmp", []byte(text+"\n"), 0o644)
			os.Rename(do.AskResultFile+".tmp", do.AskResultFile)
		}
		if n := do.NotifyAfter; n != nil {
			f.conn.Notify(ctx, n.Method, n.Params)
		}
		for i := 1; i <= do.ProgressAfterAsk && p.Meta.ProgressToken != nil; i++ {
			f.conn.Notify(ctx, "notifications/progress", mustMarshal(map[string]any{"progressToken": p.Meta.ProgressToken, "progress": i, "message": "after the answer"}))
		}
		return mustMarshal(map[string]any{"content": []any{map[string]string{"type": "text", "text": text}}}), nil
	}
	send := f.sender(ctx)
	if b := do.LogBurst; b != nil && wantsLog(env, "info") {
		params := mustMarshal(map[string]any{"level": "info", "logger": "tool", "data": strings.Repeat("x", b.Bytes)})
		for range b.Count {
			send("notifications/message", params)
		}
	}
	if do.LogMessage != "" && wantsLog(env, "info") {
		send("notifications/message", mustMarshal(map[string]any{"level": "info", "logger": "tool", "data": do.LogMessage}))
	}
	gap, _ := time.ParseDuration(do.ProgressGap)
	for i := 1; i <= do.Progress && p.Meta.ProgressToken != nil; i++ {
		time.Sleep(gap) // a slow tool at work: this is the behaviour under test, not synchronisation
		send("notifications/progress", mustMarshal(map[string]any{"progressToken": p.Meta.ProgressToken, "progress": i, "total": do.Progress}))
	}
	if len(do.Input) > 0 {
		res, echo, err := f.serveInput(ctx, "tools/call", p.Name, do.Input, params, f.askClient())
		if err != nil || res != nil {
			return res, err
		}
		do.Text = echo
	}
	switch {
	case do.Error != nil:
		var e jsonrpc.Error
		json.Unmarshal(do.Error, &e)
		return nil, &e
	case do.Result != nil:
		var b bytes.Buffer
		json.Compact(&b, do.Result) // one message per line
		return b.Bytes(), nil
	}
	text := do.Text
	if do.TextBytes > len(text) {
		text += strings.Repeat("x", do.TextBytes-len(text)) + do.TextAfter
	}
	if text == "" {
		args := "{}"
		if len(p.Arguments) > 0 {
			var v any
			json.Unmarshal(p.Arguments, &v)
			args = string(mustMarshal(v))
		}
		text = fmt.Sprintf("%s/%s %s", f.spec.Name, p.Name, args)
	}
	return mustMarshal(map[string]any{"content": []any{map[string]string{"type": "text", "text": text}}}), nil
}

// askClient is how a legacy request's input rounds reach the client:
// requests on stdout (nil over -http, where fakehttp_test.go asks).
func (f *fake) askClient() askFunc {
	if f.conn == nil {
		return nil
	}
	return f.conn.Call
}

// writeRepeated writes text n times in large writes, so that a flood of
// hundreds of megabytes takes a moment, not millions of system calls.
func writeRepeated(w io.Writer, text string, n int) {
	per := max(1, min(n, (1<<20)/len(text)))
	chunk := []byte(strings.Repeat(text, per))
	for ; n >= per; n -= per {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
	w.Write(chunk[:n*len(text)])
}

func ignoreTERM() { signal.Ignore(syscall.SIGTERM) }

// flood sends do.Ask do.AskCount times at once, as a server gone wrong
// would, and answers with how many were refused at once: once
// do.AskRefusals were, or after 10s.
func (f *fake) flood(ctx context.Context, do fakeBehaviour) (json.RawMessage, error) {
	refused := make(chan string, do.AskCount)
	for range do.AskCount {
		go func() {
			if _, err := f.conn.Call(ctx, do.Ask.Method, do.Ask.Params); err != nil {
				refused <- err.Error()
			}
		}()
	}
	n, first := 0, ""
	deadline := time.After(10 * time.Second)
	for n < do.AskRefusals {
		select {
		case msg := <-refused:
			if n++; first == "" {
				first = msg
			}
			continue
		case <-deadline:
		}
		break
	}
	text := fmt.Sprintf("refused %d of %d at once: %s", n, do.AskCount, first)
	return mustMarshal(map[string]any{"content": []any{map[string]string{"type": "text", "text": text}}}), nil
}

// waitForFile returns once name exists (at once for ""), or when ctx ends.
func waitForFile(ctx context.Context, name string) error {
	for name != "" {
		if _, err := os.Stat(name); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond): // polling a file for an event, not a sleep for timing
		}
	}
	return nil
}

// plainWriter hides the file it writes to, so that the fake writes as most
// servers do: jsonrpc would raise the size of its stdout pipe for a big
// result (growPipe), which a server in another language does not do, and
// which would move the benchmarks' direct floor whenever mcpgate's jsonrpc
// changed.
type plainWriter struct{ w io.Writer }

func (p plainWriter) Write(b []byte) (int, error) { return p.w.Write(b) }

// rawAnswer is the raw_answer of the tool msg calls, if any.
func (f *fake) rawAnswer(msg *jsonrpc.Message) string {
	if msg.Method != "tools/call" {
		return ""
	}
	var p struct {
		Name string `json:"name"`
	}
	json.Unmarshal(msg.Params, &p)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range f.spec.Tools {
		var def struct {
			Name string `json:"name"`
		}
		json.Unmarshal(t.Raw, &def)
		if def.Name == p.Name {
			return t.Do.RawAnswer
		}
	}
	return ""
}
