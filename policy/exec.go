package policy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/internal/rawjson"
)

// The exec policy asks an external program. It gets each decision's input
// as one JSON object (execQuestion) and answers one JSON object:
//
//	{"action": "allow" | "deny" | "modify", "reason": "...", "message": {...}}
//
// "per_decision" runs the program once per decision: the question on its
// stdin, which then closes; the answer on its stdout, until it exits (with
// status 0). "persistent" starts it once, when first needed, and keeps it:
// one question per line in, one answer per line out, one decision at a time
// (a program that answers in order needs no ids). A program that dies is
// started again for the next decision.
//
// A program that fails, answers late or answers garbage decides nothing:
// on_error does ("deny", the default, or "allow"), and the operator's log
// says why once per episode, not once per decision.

const (
	// execAnswerSlack is what an answer may hold beyond twice the message
	// it is about: room for a modified message to grow, and a bound on
	// what a runaway program makes the gateway keep.
	execAnswerSlack = 1 << 20
	// execMaxReason is the most of a program's reason that is kept.
	execMaxReason = 1024
	// execMaxRunning is how many per_decision programs run at once; a
	// decision waits for a turn within its timeout.
	execMaxRunning = 16
	// execWaitDelay bounds the wait for a program's pipes to close once it
	// has exited or been killed (a child of it may hold them).
	execWaitDelay = time.Second
	// execStopGrace is how long a persistent program has to exit after its
	// stdin closes, when the policy is closed, before it is killed.
	execStopGrace = 2 * time.Second
	// execMaxStderrLine is the most of one stderr line that is logged, and
	// execMaxStderrRun the most of one per_decision run's stderr.
	execMaxStderrLine = 4096
	execMaxStderrRun  = 4096
)

// execQuestion is what the program is asked: the Input, and the message as
// JSON (null when there is none).
type execQuestion struct {
	Stage        string          `json:"stage"` // "request", "result" or "list"
	Session      string          `json:"session"`
	Stateless    bool            `json:"stateless"` // a request without a session: Session is its own, new each time
	Client       string          `json:"client"`    // as the transport authenticated it (Input.Client); "" when it cannot tell
	Server       string          `json:"server"`
	Method       string          `json:"method"`
	Kind         string          `json:"kind"`
	Name         string          `json:"name"`
	UpstreamName string          `json:"upstream_name"`
	Message      json.RawMessage `json:"message"`
}

// Finding kinds of the exec policy, when its program could not decide.
const (
	execKindTimeout = "timeout"        // no answer within the timeout
	execKindFailed  = "failed"         // did not start, exited with an error, or was cancelled
	execKindInvalid = "invalid_answer" // answered something that is not an answer
)

// errExecAnswer marks an answer that could not be used.
var errExecAnswer = errors.New("invalid answer")

type execPolicy struct {
	name         string
	timeout      time.Duration
	allowOnError bool
	stages       []Stage
	log          *slog.Logger
	runner       execRunner
	health       execHealth
}

// execRunner puts a question to the program and reads its answer (of at
// most limit bytes). It returns ctx.Err() when the context ends first (the
// timeout is in ctx).
type execRunner interface {
	decide(ctx context.Context, question []byte, limit int) (Decision, error)
	close()
}

func newExec(spec config.Policy, env Env) (Policy, error) {
	if spec.Command == "" {
		return nil, fmt.Errorf("%s.command: missing: the program that decides", spec.Path)
	}
	command, err := exec.LookPath(spec.Command)
	if err != nil {
		return nil, fmt.Errorf("%s.command: cannot run %q: %v (give its full path, or put it on PATH)", spec.Path, spec.Command, err)
	}
	p := &execPolicy{name: spec.Name, timeout: spec.Timeout, log: env.Logger}
	if p.log == nil {
		p.log = slog.Default()
	}
	p.log = p.log.With("policy", spec.Name, "where", spec.Path)
	switch {
	case p.timeout == 0:
		p.timeout = 5 * time.Second
	case p.timeout < 0:
		return nil, fmt.Errorf("%s.timeout: must be positive, not %v", spec.Path, p.timeout)
	}
	switch spec.OnError {
	case "", "deny":
	case "allow":
		p.allowOnError = true
	default:
		return nil, fmt.Errorf(`%s.on_error: must be "deny" or "allow", not %q`, spec.Path, spec.OnError)
	}
	on := spec.On
	if on == nil {
		on = []string{"requests"}
	}
	for i, s := range on {
		switch s {
		case "requests":
			p.stages = append(p.stages, Request)
		case "results":
			p.stages = append(p.stages, Result)
		case "lists":
			p.stages = append(p.stages, List)
		default:
			return nil, fmt.Errorf(`%s.on[%d]: exec acts on "requests", "results" or "lists", not %q`, spec.Path, i, s)
		}
	}
	switch spec.Mode {
	case "", "per_decision":
		p.runner = &execOnce{command: command, args: spec.ExecArgs, log: p.log, turns: make(chan struct{}, execMaxRunning)}
	case "persistent":
		p.runner = &execServer{command: command, args: spec.ExecArgs, log: p.log, turn: make(chan struct{}, 1)}
	default:
		return nil, fmt.Errorf(`%s.mode: must be "per_decision" or "persistent", not %q`, spec.Path, spec.Mode)
	}
	return p, nil
}

func (p *execPolicy) Name() string    { return p.name }
func (p *execPolicy) Stages() []Stage { return p.stages }

// Close stops a persistent program: its stdin closes, and it is killed if
// it has not exited shortly after. A decision in progress ends first.
// Decisions after Close follow on_error.
func (p *execPolicy) Close() error {
	p.runner.close()
	return nil
}

func (p *execPolicy) Decide(ctx context.Context, in *Input) Decision {
	if !acts(p, in.Stage) {
		return Decision{}
	}
	msg := in.Message
	if len(msg) == 0 {
		msg = json.RawMessage("null")
	}
	// Marshal compacts the message: the question is one line.
	q, err := json.Marshal(execQuestion{
		Stage: in.Stage.String(), Session: in.Session, Stateless: in.Stateless, Client: in.Client, Server: in.Server, Method: in.Method,
		Kind: in.Kind, Name: in.Name, UpstreamName: in.UpstreamName, Message: msg,
	})
	if err != nil {
		return p.failed(fmt.Errorf("the message to ask about is not valid JSON: %v", err))
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	d, err := p.runner.decide(ctx, append(q, '\n'), execAnswerSlack+2*len(msg))
	if err != nil {
		return p.failed(err)
	}
	p.health.ok(p.log)
	return d
}

// failed is the decision when the program could not decide: on_error's.
// The reason says what went wrong in general words; the log has the
// details (which may hold what the program printed).
func (p *execPolicy) failed(err error) Decision {
	kind, what := execKindFailed, "failed"
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		kind, what = execKindTimeout, fmt.Sprintf("did not answer within %v", p.timeout)
	case errors.Is(err, context.Canceled):
		what = "was interrupted: the request was cancelled"
	case errors.Is(err, errExecAnswer):
		kind, what = execKindInvalid, "gave an answer that is not one"
	}
	if !errors.Is(err, context.Canceled) {
		p.health.fail(p.log, err, p.allowOnError)
	}
	d := Decision{Action: Deny, Reason: "the policy program " + what + `; refused (on_error "deny")`, Findings: []Finding{{Kind: kind, Count: 1}}}
	if p.allowOnError {
		d.Action, d.Reason = Audit, "the policy program "+what+`; allowed (on_error "allow")`
	}
	return d
}

// parseExecAnswer reads a program's answer. Keys are matched exactly and a
// duplicate is an error, as everywhere mcpgate reads JSON it acts on;
// unknown keys are ignored, for programs written against a later version.
func parseExecAnswer(answer []byte) (Decision, error) {
	ms, err := rawjson.Members(bytes.TrimSpace(answer))
	if err != nil {
		return Decision{}, fmt.Errorf("%w: not a JSON object: %v", errExecAnswer, err)
	}
	var action, reason string
	raw, ok := ms.Get("action")
	if !ok || json.Unmarshal(raw, &action) != nil {
		return Decision{}, fmt.Errorf(`%w: "action" must be "allow", "deny" or "modify"`, errExecAnswer)
	}
	if raw, ok := ms.Get("reason"); ok && json.Unmarshal(raw, &reason) != nil {
		return Decision{}, fmt.Errorf(`%w: "reason" must be a string`, errExecAnswer)
	}
	reason = execCutText(reason, execMaxReason)
	switch action {
	case "allow":
		return Decision{}, nil
	case "deny":
		if reason == "" {
			reason = "refused by the policy program"
		}
		return Decision{Action: Deny, Reason: reason}, nil
	case "modify":
		msg, ok := ms.Get("message")
		if !ok || msg[0] != '{' {
			return Decision{}, fmt.Errorf(`%w: "modify" needs a "message" that is a JSON object`, errExecAnswer)
		}
		if reason == "" {
			reason = "changed by the policy program"
		}
		// A copy: the answer's buffer is not the decision's to keep.
		return Decision{Action: Modify, Message: bytes.Clone(msg), Reason: reason}, nil
	}
	return Decision{}, fmt.Errorf(`%w: "action" must be "allow", "deny" or "modify", not %q`, errExecAnswer, execCutText(action, 32))
}

// execCutText cuts s to at most n bytes, at a character boundary, marking the cut.
func execCutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s[max(0, len(s)-utf8.UTFMax):]) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// execHealth logs a failing program once per episode: when it starts
// failing, and when it works again.
type execHealth struct {
	mu       sync.Mutex
	failures int // since it last worked
}

func (h *execHealth) fail(log *slog.Logger, err error, allowed bool) {
	h.mu.Lock()
	h.failures++
	first := h.failures == 1
	h.mu.Unlock()
	if first {
		outcome := "denied"
		if allowed {
			outcome = "allowed"
		}
		attrs := []any{"error", err}
		var re *execRunError
		if errors.As(err, &re) {
			attrs = append(attrs, "stderr", re.stderr)
		}
		log.Warn("policy program could not decide; until it can, requests are "+outcome+" (on_error)", attrs...)
	}
}

func (h *execHealth) ok(log *slog.Logger) {
	h.mu.Lock()
	n := h.failures
	h.failures = 0
	h.mu.Unlock()
	if n > 0 {
		log.Info("policy program decides again", "failed_decisions", n)
	}
}

// execOnce runs the program once per decision.
type execOnce struct {
	command string
	args    []string
	log     *slog.Logger
	turns   chan struct{} // a slot per program running
}

func (r *execOnce) decide(ctx context.Context, question []byte, limit int) (Decision, error) {
	answer, err := r.run(ctx, question, limit)
	if err != nil {
		return Decision{}, err
	}
	return parseExecAnswer(answer)
}

func (r *execOnce) run(ctx context.Context, question []byte, limit int) ([]byte, error) {
	select {
	case r.turns <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-r.turns }()
	run, kill := context.WithCancel(ctx)
	defer kill()
	cmd := exec.CommandContext(run, r.command, r.args...)
	cmd.Stdin = bytes.NewReader(question)
	out := &execAnswerBuffer{limit: limit, overflow: kill}
	stderr := &execStderr{}
	cmd.Stdout, cmd.Stderr = out, stderr
	startExecInOwnGroup(cmd)
	cmd.Cancel = func() error { return killExecGroup(cmd.Process) }
	cmd.WaitDelay = execWaitDelay
	err := cmd.Run()
	stderr.flush()
	switch {
	case out.overflowed:
		err = fmt.Errorf("%w: longer than %d bytes", errExecAnswer, limit)
	case ctx.Err() != nil:
		err = ctx.Err()
	case err != nil:
		err = fmt.Errorf("%s: %w", r.command, err)
	}
	if err != nil {
		// What the program said goes with the failure, logged once per
		// episode, not once per run.
		if len(stderr.kept) > 0 {
			err = &execRunError{err: err, stderr: stderr.text()}
		}
		return nil, err
	}
	for _, line := range strings.Split(strings.TrimSuffix(stderr.text(), "\n"), "\n") {
		if line != "" {
			r.log.Info("policy program stderr", "line", line)
		}
	}
	return out.buf, nil
}

// execRunError is a failed run with what the program wrote to stderr.
type execRunError struct {
	err    error
	stderr string
}

func (e *execRunError) Error() string { return e.err.Error() }
func (e *execRunError) Unwrap() error { return e.err }

func (r *execOnce) close() {}

// execAnswerBuffer keeps a program's stdout up to a limit; past it, it
// stops the program (a runaway answer is no answer) and discards the rest.
type execAnswerBuffer struct {
	buf        []byte
	limit      int
	overflowed bool
	overflow   func()
}

func (b *execAnswerBuffer) Write(p []byte) (int, error) {
	if !b.overflowed && len(b.buf)+len(p) > b.limit {
		b.overflowed = true
		b.buf = nil
		b.overflow()
	}
	if !b.overflowed {
		b.buf = append(b.buf, p...)
	}
	return len(p), nil
}

// execStderr takes what a program writes to stderr a line at a time, in
// bounded memory: a line is cut at execMaxStderrLine. With a logger
// (persistent) each line is logged; without (per_decision) the run's first
// execMaxStderrRun bytes of lines are kept. Writes come from one goroutine
// (exec's copier); flush after Wait.
type execStderr struct {
	log  *slog.Logger
	kept []byte // lines, each ending in \n
	more bool   // lines past execMaxStderrRun were dropped
	line []byte
	cut  bool // the line was cut; skip to its end
}

func (w *execStderr) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		end := bytes.IndexAny(p, "\r\n")
		part := p
		if end >= 0 {
			part = p[:end]
		}
		if !w.cut {
			room := execMaxStderrLine - len(w.line)
			if len(part) > room {
				w.line = append(w.line, part[:room]...)
				w.emit("…")
				w.cut = true
			} else {
				w.line = append(w.line, part...)
			}
		}
		if end < 0 {
			break
		}
		w.emit("")
		w.cut = false
		p = p[end+1:]
	}
	return n, nil
}

func (w *execStderr) flush() {
	w.emit("")
}

func (w *execStderr) emit(suffix string) {
	line := string(execTrimCutRune(w.line)) + suffix
	w.line = w.line[:0]
	switch {
	case line == suffix:
	case w.log != nil:
		w.log.Info("policy program stderr", "line", line)
	case len(w.kept)+len(line)+1 > execMaxStderrRun:
		w.more = true
	default:
		w.kept = append(append(w.kept, line...), '\n')
	}
}

// text is the lines kept, with a last line saying if some were dropped.
func (w *execStderr) text() string {
	if w.more {
		return string(w.kept) + "…\n"
	}
	return string(w.kept)
}

// execTrimCutRune drops a UTF-8 sequence cut off at the end of b.
func execTrimCutRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// execServer keeps one program running and talks to it a line at a time.
type execServer struct {
	command string
	args    []string
	log     *slog.Logger
	// turn is 1-buffered: holding its slot is the right to talk to the
	// program, and to change proc and closed.
	turn   chan struct{}
	proc   *execProcess // nil: not running
	closed bool
}

type execProcess struct {
	cmd     *exec.Cmd
	stdin   *os.File // our ends of its stdin and stdout
	stdout  *os.File
	answers *bufio.Reader
	exited  chan struct{} // closed when Wait has returned
}

func (s *execServer) decide(ctx context.Context, question []byte, limit int) (Decision, error) {
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return Decision{}, ctx.Err()
	}
	defer func() { <-s.turn }()
	if s.closed {
		return Decision{}, errors.New("the policy was closed")
	}
	if err := ctx.Err(); err != nil {
		return Decision{}, err // cancelled while waiting for the turn
	}
	if s.proc != nil && s.proc.hasExited() {
		s.proc.kill()
		s.proc = nil
	}
	if s.proc == nil {
		p, err := s.start()
		if err != nil {
			return Decision{}, err
		}
		s.proc = p
	}
	answer, err := s.proc.ask(ctx, question, limit)
	var d Decision
	if err == nil {
		d, err = parseExecAnswer(answer)
	}
	if err != nil {
		// Out of step, or may be: a late answer would be read as the next
		// question's, and garbage may be a line printed besides the
		// answer. The next decision starts a fresh program.
		s.proc.kill()
		s.proc = nil
	}
	return d, err
}

func (s *execServer) start() (*execProcess, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd := exec.Command(s.command, s.args...)
	// Files, not writers: exec hands them to the program as they are, and
	// our ends take deadlines.
	cmd.Stdin, cmd.Stdout = inR, outW
	stderr := &execStderr{log: s.log}
	cmd.Stderr = stderr
	cmd.WaitDelay = execWaitDelay
	startExecInOwnGroup(cmd)
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("%s: %w", s.command, err)
	}
	p := &execProcess{cmd: cmd, stdin: inW, stdout: outR, answers: bufio.NewReaderSize(outR, 64<<10), exited: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		stderr.flush()
		if err != nil {
			s.log.Info("policy program exited", "error", err)
		}
		close(p.exited)
	}()
	return p, nil
}

// ask puts one question and reads one answer, within ctx's deadline. A
// cancelled request does not cut the exchange short: the answer comes, or
// the deadline, and the program stays in step.
func (p *execProcess) ask(ctx context.Context, question []byte, limit int) ([]byte, error) {
	deadline, _ := ctx.Deadline()
	if err := p.stdin.SetWriteDeadline(deadline); err != nil {
		return nil, fmt.Errorf("persistent mode needs pipes that take deadlines: %w", err)
	}
	if _, err := p.stdin.Write(question); err != nil {
		return nil, execIOError(err, "reading its input")
	}
	if err := p.stdout.SetReadDeadline(deadline); err != nil {
		return nil, fmt.Errorf("persistent mode needs pipes that take deadlines: %w", err)
	}
	answer, err := readExecAnswerLine(p.answers, limit)
	if err != nil {
		return nil, execIOError(err, "answering")
	}
	return answer, nil
}

func execIOError(err error, doing string) error {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return context.DeadlineExceeded
	case errors.Is(err, errExecAnswer):
		return err
	}
	return fmt.Errorf("stopped %s: %w", doing, err)
}

// readExecAnswerLine reads the next non-blank line, of at most limit bytes.
func readExecAnswerLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > limit {
			return nil, fmt.Errorf("%w: longer than %d bytes", errExecAnswer, limit)
		}
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) > 0 {
			return line, nil
		}
		line = line[:0]
	}
}

func (p *execProcess) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// kill ends the program at once; Wait, in its own goroutine, reaps it.
func (p *execProcess) kill() {
	killExecGroup(p.cmd.Process)
	p.stdin.Close()
	p.stdout.Close()
}

func (s *execServer) close() {
	s.turn <- struct{}{}
	defer func() { <-s.turn }()
	s.closed = true
	p := s.proc
	s.proc = nil
	if p == nil {
		return
	}
	p.stdin.Close() // a well-behaved program exits at the end of its input
	timer := time.NewTimer(execStopGrace)
	defer timer.Stop()
	select {
	case <-p.exited:
	case <-timer.C:
	}
	p.kill()
	<-p.exited // bounded: killed, and Wait gives up on its pipes after execWaitDelay
}
