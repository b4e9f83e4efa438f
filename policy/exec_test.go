package policy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/config"
)

// execHelperArg, after "--" on the test binary's command line, makes the
// test binary an exec policy's program (TestExecHelperProgram): the mode
// after it says how it behaves. Without it that test does nothing.
const execHelperArg = "mcpgate-policy-exec-helper"

// TestExecHelperProgram is not a test: it is the program the exec tests
// run, the test binary started again with "-- mcpgate-policy-exec-helper
// <mode>". It exits before the testing package can print to stdout.
func TestExecHelperProgram(t *testing.T) {
	args := flag.Args()
	if len(args) != 2 || args[0] != execHelperArg {
		return
	}
	out := bufio.NewWriter(os.Stdout)
	answer := func(s string) {
		out.WriteString(s + "\n")
		out.Flush()
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	readQuestion := func() (execQuestion, bool) {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return execQuestion{}, false
		}
		var q execQuestion
		if err := json.Unmarshal(line, &q); err != nil {
			fmt.Fprintln(os.Stderr, "bad question:", err)
			helperExit(3)
		}
		return q, true
	}
	switch args[1] {
	case "allow":
		readQuestion()
		answer(`{"action": "allow"}`)
	case "deny":
		readQuestion()
		answer(`{"action": "deny", "reason": "no writes on Fridays", "future_key": 1}`)
	case "echo":
		// Modify, with the question as the new message: the test sees what
		// the program was asked.
		line, _ := in.ReadBytes('\n')
		answer(`{"action": "modify", "reason": "echoed", "message": ` + strings.TrimSpace(string(line)) + `}`)
	case "silent-allow":
		answer(`{"action": "allow"}`) // without reading the question
	case "hang":
		readQuestion()
		time.Sleep(time.Hour)
	case "garbage":
		readQuestion()
		answer(`allow`)
	case "huge":
		readQuestion()
		out.WriteString(`{"action": "deny", "reason": "`)
		out.WriteString(strings.Repeat("x", 4<<20))
		answer(`"}`)
	case "fail":
		readQuestion()
		fmt.Fprintln(os.Stderr, "cannot reach the rules database")
		helperExit(1)
	case "stderr-flood":
		readQuestion()
		line := strings.Repeat("e", 100) + "\n"
		for range 10000 {
			os.Stderr.WriteString(line)
		}
		os.Stderr.WriteString(strings.Repeat("long", 10000) + "\n")
		answer(`{"action": "allow"}`)
	case "persistent":
		// Answers in turn; the question's session says what to do, and the
		// answer's reason says who answered what.
		n := 0
		for {
			q, ok := readQuestion()
			if !ok {
				helperExit(0)
			}
			n++
			switch q.Session {
			case "hang":
				time.Sleep(time.Hour)
			case "crash":
				helperExit(2)
			case "garbage":
				answer(`not json`)
			case "blank-first":
				answer("")
				answer(fmt.Sprintf(`{"action": "deny", "reason": "pid %d answer %d to %s"}`, os.Getpid(), n, q.Session))
			default:
				answer(fmt.Sprintf(`{"action": "deny", "reason": "pid %d answer %d to %s"}`, os.Getpid(), n, q.Session))
			}
		}
	case "ignore-eof":
		// A program that does not end when its input does.
		readQuestion()
		answer(`{"action": "allow"}`)
		for {
			if _, ok := readQuestion(); !ok {
				time.Sleep(time.Hour)
			}
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", args[1])
		helperExit(3)
	}
	helperExit(0)
}

// helperExit ends the helper program without the race detector's second
// of sleep at exit (GORACE's atexit_sleep_ms), which every decision would
// wait for.
func helperExit(code int) {
	syscall.Exit(code)
}

// execLogBuffer collects log output written from several goroutines.
type execLogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *execLogBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *execLogBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newExecHelper makes an exec policy whose program is the test binary in
// the given mode. Timeouts that must not fire are generous: a slow machine
// must not fail a test that is not about time.
func newExecHelper(t *testing.T, mode string, spec config.Policy) (*execPolicy, *execLogBuffer) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	spec.Name, spec.Path = "exec", "policies[0]"
	spec.Command = self
	spec.ExecArgs = []string{"-test.run=^TestExecHelperProgram$", "--", execHelperArg, mode}
	if spec.Timeout == 0 {
		spec.Timeout = time.Minute
	}
	logs := &execLogBuffer{}
	p, err := newExec(spec, Env{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ep := p.(*execPolicy)
	t.Cleanup(func() { ep.Close() })
	return ep, logs
}

func TestExecPerDecision(t *testing.T) {
	in := ruleToolCall("write_file", `{"path":"/data/a.txt"}`)
	tests := []struct {
		mode   string
		action Action
		reason string
	}{
		{"allow", Allow, ""},
		{"silent-allow", Allow, ""},
		{"deny", Deny, "no writes on Fridays"},
		{"echo", Modify, "echoed"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			p, logs := newExecHelper(t, tt.mode, config.Policy{})
			d := p.Decide(context.Background(), in)
			if d.Action != tt.action || d.Reason != tt.reason {
				t.Errorf("got %v %q, want %v %q", d.Action, d.Reason, tt.action, tt.reason)
			}
			if strings.Contains(logs.String(), "level=WARN") {
				t.Errorf("a working program was logged as failing:\n%s", logs)
			}
		})
	}
}

// The question's shape is documented: these are its keys.
func TestExecQuestion(t *testing.T) {
	p, _ := newExecHelper(t, "echo", config.Policy{On: []string{"requests", "results", "lists"}})
	in := &Input{Stage: Result, Session: "s-1", Server: "fs", Method: "tools/call", Kind: "tool", Name: "fs__read_file", UpstreamName: "read_file",
		Message: json.RawMessage("{\n  \"content\": [{\"type\": \"text\", \"text\": \"a <b> & c\"}]\n}")}
	d := p.Decide(context.Background(), in)
	if d.Action != Modify {
		t.Fatalf("got %v (%s)", d.Action, d.Reason)
	}
	want := `{"stage":"result","session":"s-1","stateless":false,"client":"","server":"fs","method":"tools/call","kind":"tool","name":"fs__read_file","upstream_name":"read_file","message":{"content":[{"type":"text","text":"a \u003cb\u003e \u0026 c"}]}}`
	if string(d.Message) != want {
		t.Errorf("question\n%s\nwant\n%s", d.Message, want)
	}
	in = &Input{Stage: List, Server: "fs", Method: "tools/list", Kind: "tool", Name: "fs__x", UpstreamName: "x"}
	if d := p.Decide(context.Background(), in); !strings.Contains(string(d.Message), `"stage":"list"`) || !strings.HasSuffix(string(d.Message), `"message":null}`) {
		t.Errorf("list question without a message: %s", d.Message)
	}
}

// A request without a session (2026-07-28 over HTTP) is asked about with
// what says who sent it: its session is new with every request, its client
// the name the transport authenticated.
func TestExecQuestionStateless(t *testing.T) {
	p, _ := newExecHelper(t, "echo", config.Policy{})
	in := &Input{Stage: Request, Session: "fresh", Stateless: true, Client: "bearer:5e884898", Server: "fs", Method: "tools/call", Kind: "tool", Name: "fs__x", UpstreamName: "x",
		Message: json.RawMessage(`{"name":"x"}`)}
	d := p.Decide(context.Background(), in)
	want := `{"stage":"request","session":"fresh","stateless":true,"client":"bearer:5e884898","server":"fs","method":"tools/call","kind":"tool","name":"fs__x","upstream_name":"x","message":{"name":"x"}}`
	if d.Action != Modify || string(d.Message) != want {
		t.Errorf("question %v\n%s\nwant\n%s", d.Action, d.Message, want)
	}
}

func TestExecStages(t *testing.T) {
	p, _ := newExecHelper(t, "deny", config.Policy{})
	in := ruleToolCall("x", `{}`)
	in.Stage = Result
	if d := p.Decide(context.Background(), in); d.Action != Allow {
		t.Errorf("results are not asked about by default: %v", d.Action)
	}
	if got := p.Stages(); len(got) != 1 || got[0] != Request {
		t.Errorf("stages %v, want [request]", got)
	}
}

func TestExecOnError(t *testing.T) {
	in := ruleToolCall("write_file", `{"path":"/data/a.txt"}`)
	tests := []struct {
		mode    string
		timeout time.Duration
		kind    string
		what    string
	}{
		{"hang", 200 * time.Millisecond, execKindTimeout, "did not answer within 200ms"},
		{"garbage", 0, execKindInvalid, "gave an answer that is not one"},
		{"huge", 0, execKindInvalid, "gave an answer that is not one"},
		{"fail", 0, execKindFailed, "failed"},
	}
	for _, tt := range tests {
		for _, mode := range []string{"per_decision", "persistent"} {
			t.Run(tt.mode+"/"+mode, func(t *testing.T) {
				p, logs := newExecHelper(t, tt.mode, config.Policy{Timeout: tt.timeout, Mode: mode})
				d := p.Decide(context.Background(), in)
				if want := "the policy program " + tt.what + `; refused (on_error "deny")`; d.Action != Deny || d.Reason != want {
					t.Errorf("got %v %q, want deny %q", d.Action, d.Reason, want)
				}
				if len(d.Findings) != 1 || d.Findings[0] != (Finding{Kind: tt.kind, Count: 1}) {
					t.Errorf("findings %+v, want %s", d.Findings, tt.kind)
				}
				if !strings.Contains(logs.String(), "level=WARN msg=\"policy program could not decide") {
					t.Errorf("the failure is not logged:\n%s", logs)
				}

				p, _ = newExecHelper(t, tt.mode, config.Policy{Timeout: tt.timeout, Mode: mode, OnError: "allow"})
				d = p.Decide(context.Background(), in)
				if want := "the policy program " + tt.what + `; allowed (on_error "allow")`; d.Action != Audit || d.Reason != want {
					t.Errorf("on_error allow: got %v %q, want audit %q", d.Action, d.Reason, want)
				}
			})
		}
	}
}

func TestExecLogsOncePerEpisode(t *testing.T) {
	p, logs := newExecHelper(t, "fail", config.Policy{})
	in := ruleToolCall("x", `{}`)
	for range 3 {
		p.Decide(context.Background(), in)
	}
	if n := strings.Count(logs.String(), "could not decide"); n != 1 {
		t.Errorf("%d failure lines for one episode, want 1:\n%s", n, logs)
	}
	if n := strings.Count(logs.String(), "cannot reach the rules database"); n != 1 {
		t.Errorf("the program's stderr is logged %d times for one episode, want once, with the failure:\n%s", n, logs)
	}
	if !strings.Contains(logs.String(), "exit status 1") {
		t.Errorf("the exit status is not logged:\n%s", logs)
	}
	// The program is fixed: one line says so, and the next failure starts
	// a new episode.
	p.runner.(*execOnce).args[3] = "allow"
	p.Decide(context.Background(), in)
	p.Decide(context.Background(), in)
	if !strings.Contains(logs.String(), `msg="policy program decides again" policy=exec where=policies[0] failed_decisions=3`) {
		t.Errorf("recovery not logged:\n%s", logs)
	}
	p.runner.(*execOnce).args[3] = "garbage"
	p.Decide(context.Background(), in)
	if n := strings.Count(logs.String(), "could not decide"); n != 2 {
		t.Errorf("%d failure lines for two episodes, want 2:\n%s", n, logs)
	}
}

func TestExecStderrBounded(t *testing.T) {
	p, logs := newExecHelper(t, "stderr-flood", config.Policy{})
	if d := p.Decide(context.Background(), ruleToolCall("x", `{}`)); d.Action != Allow {
		t.Fatalf("got %v (%s)", d.Action, d.Reason)
	}
	out := logs.String()
	if n := len(out); n > 4*execMaxStderrRun {
		t.Errorf("%d bytes of log for one run, want about %d", n, execMaxStderrRun)
	}
	if !strings.Contains(out, `msg="policy program stderr" policy=exec where=policies[0] line=eeee`) || !strings.Contains(out, "line=…") {
		t.Errorf("stderr is not logged, cut:\n%.2000s", out)
	}
	var w execStderr
	w.log = slog.New(slog.NewTextHandler(logs, nil))
	w.Write([]byte(strings.Repeat("é", execMaxStderrLine)))
	w.flush()
	if last := logs.String()[len(out):]; !strings.Contains(last, "é…") || len(last) > execMaxStderrLine+200 {
		t.Errorf("a long line is not cut at a character: %.100s…", last)
	}
}

func TestExecPersistent(t *testing.T) {
	p, logs := newExecHelper(t, "persistent", config.Policy{Mode: "persistent"})
	ask := func(session string) Decision {
		in := ruleToolCall("x", `{}`)
		in.Session = session
		return p.Decide(context.Background(), in)
	}
	pidOf := func(d Decision) string {
		var pid string
		fmt.Sscanf(d.Reason, "pid %s", &pid)
		return pid
	}
	first := ask("a")
	if first.Action != Deny || !strings.HasSuffix(first.Reason, "answer 1 to a") {
		t.Fatalf("first: %v %q", first.Action, first.Reason)
	}
	second := ask("b")
	if pidOf(second) != pidOf(first) || !strings.HasSuffix(second.Reason, "answer 2 to b") {
		t.Errorf("the program is not kept: %q then %q", first.Reason, second.Reason)
	}
	if d := ask("blank-first"); !strings.HasSuffix(d.Reason, "answer 3 to blank-first") {
		t.Errorf("blank lines are not skipped: %q", d.Reason)
	}

	for _, breaker := range []string{"crash", "hang", "garbage"} {
		before := ask("before")
		if breaker == "hang" {
			p.timeout = 200 * time.Millisecond
		}
		if d := ask(breaker); d.Action != Deny || len(d.Findings) != 1 {
			t.Errorf("%s: got %v %+v", breaker, d.Action, d.Findings)
		}
		p.timeout = time.Minute
		after := ask("after")
		if pidOf(after) == pidOf(before) || !strings.HasSuffix(after.Reason, "answer 1 to after") {
			t.Errorf("%s: not restarted afresh: %q then %q", breaker, before.Reason, after.Reason)
		}
	}
	if n := strings.Count(logs.String(), "could not decide"); n != 3 {
		t.Errorf("%d failure lines for three episodes:\n%s", n, logs)
	}
}

// Decisions asked at once are put to the program one at a time, and each
// gets its own answer.
func TestExecPersistentConcurrent(t *testing.T) {
	p, _ := newExecHelper(t, "persistent", config.Policy{Mode: "persistent"})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 10 {
				in := ruleToolCall("x", `{}`)
				in.Session = fmt.Sprintf("g%d-%d", g, i)
				d := p.Decide(context.Background(), in)
				if !strings.HasSuffix(d.Reason, " to "+in.Session) {
					t.Errorf("%s got %q", in.Session, d.Reason)
				}
			}
		})
	}
	wg.Wait()
}

func TestExecPersistentClose(t *testing.T) {
	for _, mode := range []string{"persistent", "ignore-eof"} {
		t.Run(mode, func(t *testing.T) {
			p, _ := newExecHelper(t, mode, config.Policy{Mode: "persistent"})
			p.Decide(context.Background(), ruleToolCall("x", `{}`))
			proc := p.runner.(*execServer).proc
			if proc == nil {
				t.Fatal("no program running")
			}
			p.Close()
			if !proc.hasExited() {
				t.Error("Close returned with the program running")
			}
			if d := p.Decide(context.Background(), ruleToolCall("x", `{}`)); d.Action != Deny {
				t.Errorf("after Close: %v, want on_error's deny", d.Action)
			}
		})
	}
}

// A cancelled request's decision is not the program's failure.
func TestExecCancelled(t *testing.T) {
	for _, mode := range []string{"per_decision", "persistent"} {
		t.Run(mode, func(t *testing.T) {
			p, logs := newExecHelper(t, "hang", config.Policy{Mode: mode, Timeout: 300 * time.Millisecond})
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			d := p.Decide(ctx, ruleToolCall("x", `{}`))
			if d.Action != Deny {
				t.Errorf("got %v", d.Action)
			}
			if strings.Contains(logs.String(), "could not decide") {
				t.Errorf("a cancellation logged as a failure:\n%s", logs)
			}
		})
	}
}

func TestExecConfigErrors(t *testing.T) {
	tests := []struct {
		spec config.Policy
		want string
	}{
		{config.Policy{}, "policies[0].command: missing"},
		{config.Policy{Command: "mcpgate-no-such-program"}, `policies[0].command: cannot run "mcpgate-no-such-program"`},
		{config.Policy{Command: "sh", Mode: "daemon"}, `policies[0].mode: must be "per_decision" or "persistent", not "daemon"`},
		{config.Policy{Command: "sh", OnError: "ignore"}, `policies[0].on_error: must be "deny" or "allow", not "ignore"`},
		{config.Policy{Command: "sh", On: []string{"notifications"}}, `policies[0].on[0]: exec acts on "requests", "results" or "lists", not "notifications"`},
		{config.Policy{Command: "sh", Timeout: -time.Second}, `policies[0].timeout: must be positive`},
	}
	for _, tt := range tests {
		tt.spec.Name, tt.spec.Path = "exec", "policies[0]"
		if _, err := newExec(tt.spec, Env{}); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q…", tt.spec, err, tt.want)
		}
	}
}

func TestExecAnswers(t *testing.T) {
	tests := []struct {
		answer string
		want   Decision
		bad    bool
	}{
		{`{"action":"allow","reason":"fine"}`, Decision{}, false},
		{` {"action":"deny"} ` + "\n", Decision{Action: Deny, Reason: "refused by the policy program"}, false},
		{`{"action":"modify","message":{"name":"x","arguments":{}}}`, Decision{Action: Modify, Reason: "changed by the policy program", Message: json.RawMessage(`{"name":"x","arguments":{}}`)}, false},
		{`{"action":"deny","reason":"` + strings.Repeat("é", execMaxReason) + `"}`, Decision{Action: Deny, Reason: strings.Repeat("é", execMaxReason/2) + "…"}, false},
		{`{"action":"modify"}`, Decision{}, true},
		{`{"action":"modify","message":"x"}`, Decision{}, true},
		{`{"action":"Allow"}`, Decision{}, true},
		{`{"Action":"allow"}`, Decision{}, true},
		{`{"action":"allow","action":"deny"}`, Decision{}, true},
		{`{"action":true}`, Decision{}, true},
		{`{"action":"deny","reason":7}`, Decision{}, true},
		{`["allow"]`, Decision{}, true},
		{``, Decision{}, true},
	}
	for _, tt := range tests {
		d, err := parseExecAnswer([]byte(tt.answer))
		if (err != nil) != tt.bad {
			t.Errorf("%s: error %v, want bad=%v", tt.answer, err, tt.bad)
			continue
		}
		if !tt.bad && (d.Action != tt.want.Action || d.Reason != tt.want.Reason || string(d.Message) != string(tt.want.Message)) {
			t.Errorf("%.60s: got %+v, want %+v", tt.answer, d, tt.want)
		}
	}
}

func FuzzExecAnswer(f *testing.F) {
	for _, s := range []string{`{"action":"allow"}`, `{"action":"modify","message":{}}`, `{"action":"deny","reason":"\u00e9"}`, `{"action":"modify","message":[]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, answer []byte) {
		d, err := parseExecAnswer(answer)
		if err != nil {
			return
		}
		if d.Action == Modify && !json.Valid(d.Message) {
			t.Fatalf("modify with invalid message %q", d.Message)
		}
		if len(d.Reason) > execMaxReason+len("…") {
			t.Fatalf("reason of %d bytes", len(d.Reason))
		}
	})
}

func BenchmarkExec(b *testing.B) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	in := ruleToolCall("write_file", `{"path":"/data/a.txt","content":"hello"}`)
	for _, mode := range []string{"per_decision", "persistent"} {
		b.Run(mode, func(b *testing.B) {
			helper := "allow"
			if mode == "persistent" {
				helper = "persistent"
			}
			p, err := newExec(config.Policy{Name: "exec", Command: self, Mode: mode, Timeout: time.Minute,
				ExecArgs: []string{"-test.run=^TestExecHelperProgram$", "--", execHelperArg, helper}}, Env{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			defer p.(*execPolicy).Close()
			for b.Loop() {
				if d := p.Decide(context.Background(), in); len(d.Findings) > 0 {
					b.Fatal(d.Reason)
				}
			}
		})
	}
}
