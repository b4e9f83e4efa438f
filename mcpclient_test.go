package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// mcpclient plays a session file against an MCP server: a command it
// starts and speaks to over stdio, as Claude Desktop does; or, with -url, a
// server over Streamable HTTP (-sse: the older HTTP+SSE transport).
//
//	mcpclient [-timeout 10s] [-stderr-unread] SESSION COMMAND [ARG...]
//	mcpclient [-timeout 10s] -url URL [-sse] SESSION
//
// The command's stderr is copied to ours; with -stderr-unread it is a pipe
// that nobody reads (a client that leaves the log unread) until read-stderr.
//
// Session lines:
//
//	send JSON            send one message
//	send-many N JSON     send the same message N times (a flood)
//	send-seq N JSON      send N messages: JSON with $n replaced by 1, 2, … N (N requests' ids);
//	                     over HTTP, without waiting for any answer's headers
//	send-env JSON        send one message, with $VAR and ${VAR} from the environment expanded
//	send-raw JSON        send one message exactly as written, in either era: no envelope and,
//	                     over HTTP, no automatic headers (those of header lines still go)
//	init [VERSION [CAPS]] initialize (default 2025-11-25, capabilities {}) and send initialized; prints nothing
//	modern [VERSION [CAPS]] speak the 2026-07-28 era from here on: every request a send line
//	                     sends gets the envelope merged into params._meta (protocolVersion
//	                     VERSION, default 2026-07-28; clientCapabilities CAPS, default {};
//	                     clientInfo {"name":"mcpclient","version":"1"}); keys the script wrote
//	                     win. Notifications go as written. (init still speaks legacy.)
//	retry ID NEWID [JSON] send the request that had id ID again as request NEWID, with
//	                     params.inputResponses JSON (none if not given) and params.requestState
//	                     copied byte for byte from the answer to ID (none if it had none); it
//	                     does not wait: expect id=NEWID. IDs are JSON, as in expect.
//	retry-escaped ID NEWID [JSON] retry, with the key requestState written with an escape
//	                     ("request\u0053tate"), as the same key
//	expect id=ID         wait for the response to ID and print it
//	expect method=M      wait for a message with method M and print it
//	expect batch         wait for a JSON array (a batch response) and print it
//	expect SEL has=TEXT  as above, for a message whose canonical JSON contains TEXT
//	answers FROM TO      wait for the responses to the integer ids FROM..TO and print how many
//	                     were results and how many errors, and the first error (a flood's
//	                     answers, too big or too many to print)
//	write FILE           create FILE (to release a fake's wait_for_file, or signal the script)
//	wait-file FILE       wait (up to -timeout; 20s without one) for FILE to exist: the script signals with touch
//	wait-log FILE TEXT   wait (as long) for a line of FILE that contains TEXT: what a server logs
//	                     when it notices something (a fake's "client closed the stream of id 5")
//	get URL              HTTP GET URL ($VARs expanded) and print the status and body
//	                     (over HTTP with the headers set by header lines)
//	post URL             the same with an empty POST (an operator's admin command)
//	sleep-ms N           let N ms pass: only where time passing is the behaviour (expiry)
//	close                close the command's stdin and wait for it to exit
//	signal TERM|INT      send the command a signal and wait for it to exit
//	signal HUP           send the command SIGHUP (reload its config); does not wait
//	wait-exit            wait for the command to exit by itself
//	close-stdout         close our end of the command's stdout: the client left
//	stop-reading         stop reading the command's stdout (after the line being read, if
//	                     any): a client that stalls; resume-reading reads again
//	close-stderr         close our end of the command's stderr: nobody reads the log
//	read-stderr [TEXT]   start copying the command's stderr to ours (after -stderr-unread);
//	                     with TEXT, then wait for a line of it that contains TEXT
//	write-pid FILE       write the command's pid to FILE (whole when it appears)
//	# ...                comment
//
// Over HTTP, also:
//
//	header NAME: VALUE   send this header from now on (an empty VALUE removes it; Host works too);
//	                     in modern mode it overrides the automatic value, an empty VALUE
//	                     sends none at all, and VALUE auto brings the automatic one back
//	drop ID              close the answer stream of request ID (how a modern client cancels);
//	                     prints nothing
//	url URL              send to URL ($VARs expanded) from now on, once its /healthz answers:
//	                     another replica, as a load balancer may choose for any request
//	session ID           use this session id from now on (- for none)
//	save-session FILE    write the session id to FILE; load-session FILE reads it
//	listen               open the GET stream for messages not tied to a request
//	listen-unread        open the GET stream and never read it (a client that stalls)
//	delete               DELETE the session and print the status
//	load N P JSON        send N copies of the request JSON, P at a time, each with an
//	                     id of its own ("load-1", …), printing each answer as it comes;
//	                     fails at the first request that gets none (the server went away)
//
// In modern mode over HTTP no session id is sent, and each POST gets
// MCP-Protocol-Version (the message's envelope version), Mcp-Method, Mcp-Name
// (tools/call, prompts/get: params.name; resources/read: params.uri;
// =?base64?…?= when the value is not a plain ASCII header value) and, for a
// tools/call, Mcp-Param-NAME for each argument the tool's inputSchema
// annotates with "x-mcp-header": NAME, as learnt from the tools/list answers
// seen so far. A subscriptions/listen stream is a POST whose events arrive
// as they come; expect sees messages from every open stream.
//
// Each printed message is canonical JSON (sorted keys), one per line; an HTTP
// answer that is not 200 or 202 prints as "HTTP STATUS: BODY", and a request
// answered with 202 (no answer: it was cancelled) arrives as the message
// {"httpStatus":202,"id":ID}. When the
// session ends (stdio: stdin is closed and the exit status printed), any
// message never expected is printed as "unexpected: JSON".
func mcpClientMain(args []string) int {
	fs := flag.NewFlagSet("mcpclient", flag.ContinueOnError)
	timeout := fs.Duration("timeout", 10*time.Second, "how long each expect waits")
	url := fs.String("url", "", "speak Streamable HTTP to this URL instead of starting a command")
	legacy := fs.Bool("sse", false, "with -url: the older HTTP+SSE transport (URL is the /sse endpoint)")
	stderrUnread := fs.Bool("stderr-unread", false, "give the command a stderr pipe and never read it")
	if err := fs.Parse(args); err != nil || fs.NArg() < 1 || (*url == "" && fs.NArg() < 2) {
		fmt.Fprintln(os.Stderr, "usage: mcpclient [-timeout D] [-stderr-unread] SESSION COMMAND [ARG...]\n       mcpclient [-timeout D] -url URL [-sse] SESSION")
		return 2
	}
	session, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpclient:", err)
		return 2
	}
	// wait-file waits for the script, whose other phases may run long: 20s
	// unless -timeout says otherwise.
	waitFileLimit := 20 * time.Second
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "timeout" {
			waitFileLimit = *timeout
		}
	})
	c := &client{timeout: *timeout, arrived: make(chan struct{}, 1), done: make(chan struct{}),
		sent: map[string]map[string]json.RawMessage{}, answers: map[string]json.RawMessage{}}
	var t transport
	if *url != "" {
		ht, err := newHTTPTransport(c, os.ExpandEnv(*url), *legacy)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mcpclient:", err)
			return 1
		}
		t = ht
	} else {
		st, err := startStdio(c, fs.Arg(1), fs.Args()[2:], *stderrUnread)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mcpclient:", err)
			return 1
		}
		t = st
	}
	ok := true
	for n, line := range strings.Split(string(session), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		verb, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		var err error
		switch verb {
		case "send":
			err = t.send(c.prepare(rest, false), autoHeaders)
		case "send-raw":
			err = t.send(c.prepare(rest, true), noHeaders)
		case "send-env":
			err = t.send(c.prepare(os.ExpandEnv(rest), false), autoHeaders)
		case "send-many":
			var n int
			count, msg, _ := strings.Cut(rest, " ")
			fmt.Sscan(count, &n)
			msg = c.prepare(msg, false)
			for i := 0; i < n && err == nil; i++ {
				err = t.send(msg, autoHeaders)
			}
		case "send-seq":
			var n int
			count, msg, _ := strings.Cut(rest, " ")
			fmt.Sscan(count, &n)
			if ht, ok := t.(*httpTransport); ok {
				ht.noWait = true
			}
			for i := 1; i <= n && err == nil; i++ {
				err = t.send(c.prepare(strings.ReplaceAll(msg, "$n", strconv.Itoa(i)), false), autoHeaders)
			}
			if ht, ok := t.(*httpTransport); ok {
				ht.noWait = false
			}
		case "modern":
			c.modern, err = parseModern(rest)
		case "retry", "retry-escaped":
			var msg string
			if msg, err = c.retryMessage(rest); err == nil {
				msg = c.prepare(msg, false)
				if verb == "retry-escaped" {
					msg = strings.Replace(msg, `"requestState":`, `"request\u0053tate":`, 1)
				}
				err = t.send(msg, autoHeaders)
			}
		case "init":
			version, caps, _ := strings.Cut(rest, " ")
			if version == "" {
				version = "2025-11-25"
			}
			if caps == "" {
				caps = "{}"
			}
			err = t.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"mcpclient","version":"1"}}}`, version, caps), legacyHeaders)
			if err == nil {
				_, err = c.expect("id=\"init\"")
			}
			if err == nil {
				err = t.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, legacyHeaders)
			}
		case "expect":
			var msg []byte
			if msg, err = c.expect(rest); err == nil {
				fmt.Println(string(msg))
			}
		case "answers":
			err = c.tallyAnswers(rest)
		case "write":
			err = os.WriteFile(rest, nil, 0o644)
		case "wait-file":
			deadline := time.Now().Add(waitFileLimit)
			for {
				if _, serr := os.Stat(rest); serr == nil {
					break
				}
				if time.Now().After(deadline) {
					err = fmt.Errorf("no file %s after %v", rest, waitFileLimit)
					break
				}
				time.Sleep(10 * time.Millisecond) // polling for an event another process signals
			}
		case "wait-log":
			file, text, _ := strings.Cut(rest, " ")
			err = waitLog(file, text, waitFileLimit)
		case "get", "post":
			var headers map[string]string
			if ht, ok := t.(*httpTransport); ok {
				headers = ht.headerSnapshot()
			}
			err = httpDo(strings.ToUpper(verb), os.ExpandEnv(rest), headers)
		case "sleep-ms":
			// Only for behaviour that is about time passing (expiry), never
			// to wait for an event.
			var ms int
			fmt.Sscan(rest, &ms)
			time.Sleep(time.Duration(ms) * time.Millisecond)
		default:
			err = t.verb(verb, rest)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "mcpclient: %s:%d: %s: %v\n", fs.Arg(0), n+1, line, err)
			ok = false
			break
		}
	}
	if !t.end() {
		ok = false
	}
	for _, m := range c.leftovers() {
		fmt.Printf("unexpected: %s\n", m)
	}
	if !ok {
		return 1
	}
	return 0
}

// transport is how mcpclient reaches the server.
type transport interface {
	send(msg string, headers headerMode) error
	verb(name, rest string) error // transport-specific session lines
	end() bool                    // finish; false if that failed
}

// stdioTransport runs the server as a child process.
type stdioTransport struct {
	c          *client
	cmd        *exec.Cmd
	stdin      io.WriteCloser
	stdout     io.Closer
	stderr     io.ReadCloser // our end of the command's stderr, copied to ours
	stderrRead bool          // the copy has started
	stderrDone chan struct{} // closed when the copy has ended
	timeout    time.Duration
	closed     bool
}

func startStdio(c *client, name string, args []string, unread bool) (*stdioTransport, error) {
	cmd := exec.Command(name, args...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	// A pipe of our own rather than our stderr, so that close-stderr can
	// close it under the command.
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = stderrW
	err = cmd.Start()
	stderrW.Close()
	if err != nil {
		stderrR.Close()
		return nil, err
	}
	t := &stdioTransport{c: c, cmd: cmd, stdin: stdin, stdout: stdout, stderr: stderrR, stderrDone: make(chan struct{}), timeout: c.timeout}
	if !unread { // else the pipe stays open (t.stderr), full once the command has written 64 KiB
		t.readStderr("")
	}
	go c.read(stdout)
	return t, nil
}

// readStderr starts copying the command's stderr to ours. The channel
// returned is closed once a line containing want has gone by (never, for
// an empty want).
func (t *stdioTransport) readStderr(want string) (<-chan struct{}, error) {
	if t.stderrRead {
		return nil, errors.New("stderr is read already")
	}
	t.stderrRead = true
	seen := make(chan struct{})
	go func() {
		defer close(t.stderrDone)
		br := bufio.NewReader(t.stderr)
		for {
			line, err := br.ReadBytes('\n')
			os.Stderr.Write(line)
			if want != "" && bytes.Contains(line, []byte(want)) {
				close(seen)
				want = ""
			}
			if err != nil {
				return
			}
		}
	}()
	return seen, nil
}

// headerMode says which headers an HTTP POST gets besides the script's.
type headerMode int

const (
	autoHeaders   headerMode = iota // those of the client's era
	legacyHeaders                   // the session's (init, whatever the era)
	noHeaders                       // none (send-raw)
)

func (t *stdioTransport) send(msg string, _ headerMode) error {
	_, err := io.WriteString(t.stdin, msg+"\n")
	return err
}

func (t *stdioTransport) verb(name, rest string) error {
	switch name {
	case "close":
		if !t.stop(nil) {
			return errors.New("close failed")
		}
	case "signal":
		if rest == "HUP" { // a reload, not an end: nothing to wait for
			return t.cmd.Process.Signal(syscall.SIGHUP)
		}
		sig := map[string]os.Signal{"TERM": syscall.SIGTERM, "INT": os.Interrupt}[rest]
		if sig == nil {
			return errors.New("signal TERM, INT or HUP")
		}
		if !t.stop(func() { t.cmd.Process.Signal(sig) }) {
			return errors.New("the command did not exit after the signal")
		}
	case "wait-exit":
		if !t.stop(func() {}) {
			return errors.New("the command did not exit")
		}
	case "close-stdout":
		return t.stdout.Close()
	case "stop-reading":
		t.c.unread.Lock()
	case "resume-reading":
		t.c.unread.Unlock()
	case "close-stderr":
		t.stderr.Close()
		if t.stderrRead {
			<-t.stderrDone
		}
	case "read-stderr":
		seen, err := t.readStderr(rest)
		if err != nil || rest == "" {
			return err
		}
		select {
		case <-seen:
		case <-time.After(t.timeout):
			return fmt.Errorf("no stderr line containing %q after %v", rest, t.timeout)
		}
	case "write-pid":
		tmp := rest + ".tmp"
		if err := os.WriteFile(tmp, []byte(fmt.Sprint(t.cmd.Process.Pid)), 0o644); err != nil {
			return err
		}
		return os.Rename(tmp, rest)
	default:
		return fmt.Errorf("unknown verb %q", name)
	}
	return nil
}

func (t *stdioTransport) end() bool { return t.stop(nil) }

// stop ends the command with end (nil: close its stdin), waits for it to
// exit and prints how it did.
func (t *stdioTransport) stop(end func()) bool {
	if t.closed {
		return true
	}
	t.closed = true
	if end == nil {
		end = func() { t.stdin.Close() }
	}
	end()
	exited := make(chan error, 1)
	go func() { <-t.c.readDone(); exited <- t.cmd.Wait() }()
	select {
	case err := <-exited:
		if t.stderrRead {
			select {
			case <-t.stderrDone: // the command's last log lines are out
			case <-time.After(t.timeout):
			}
		}
		var ee *exec.ExitError
		if ws, ok := t.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			fmt.Printf("killed by signal: %v\n", ws.Signal())
		} else if errors.As(err, &ee) {
			fmt.Printf("exit %d\n", ee.ExitCode())
		} else {
			fmt.Println("exit 0")
		}
		return true
	case <-time.After(t.timeout):
		fmt.Fprintln(os.Stderr, "mcpclient: the command did not exit")
		t.cmd.Process.Kill()
		return false
	}
}

type client struct {
	timeout time.Duration
	modern  *modernMode // set by a modern line; nil: the legacy era

	mu       sync.Mutex
	sent     map[string]map[string]json.RawMessage // requests sent, as written, by canonical id: what retry resends
	answers  map[string]json.RawMessage            // the requestState of each answer by canonical id (nil: none)
	received [][]byte                              // canonical messages not yet expected
	done     chan struct{}                         // closed when the command's output ended
	arrived  chan struct{}                         // 1-buffered: poked on each arrival

	unread sync.Mutex // held by stop-reading: the reader waits for it before each line
}

func (c *client) readDone() <-chan struct{} { return c.done }

func (c *client) read(r io.Reader) {
	defer close(c.done)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		c.unread.Lock() // stop-reading holds it
		c.unread.Unlock()
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			c.add(line)
		}
		if err != nil {
			return
		}
	}
}

// tallyAnswers is the answers line: "FROM TO".
func (c *client) tallyAnswers(rest string) error {
	var from, to int
	if _, err := fmt.Sscan(rest, &from, &to); err != nil {
		return fmt.Errorf("answers %s: want FROM TO: %v", rest, err)
	}
	results, errs, first := 0, 0, ""
	for id := from; id <= to; id++ {
		msg, err := c.expect(fmt.Sprintf("id=%d", id))
		if err != nil {
			return err
		}
		var m struct {
			Error json.RawMessage `json:"error"`
		}
		json.Unmarshal(msg, &m)
		switch {
		case m.Error == nil:
			results++
		case first == "":
			first = string(m.Error)
			fallthrough
		default:
			errs++
		}
	}
	fmt.Printf("answers %d-%d: %d results, %d errors\n", from, to, results, errs)
	if first != "" {
		fmt.Printf("first error: %s\n", first)
	}
	return nil
}

// add records one message received.
func (c *client) add(msg []byte) {
	c.noteAnswer(msg)
	canon, err := canonical(msg)
	if err != nil {
		canon = []byte(fmt.Sprintf("NOT JSON: %q", msg))
	}
	c.mu.Lock()
	c.received = append(c.received, canon)
	c.mu.Unlock()
	select {
	case c.arrived <- struct{}{}:
	default:
	}
}

// expect waits for the first message matching sel, removes it and returns it.
func (c *client) expect(sel string) ([]byte, error) {
	sel, has, _ := strings.Cut(sel, " has=")
	key, want, _ := strings.Cut(sel, "=")
	if key != "id" && key != "method" && sel != "batch" {
		return nil, fmt.Errorf("selector must be id=ID, method=NAME or batch, not %q", sel)
	}
	deadline := time.After(c.timeout)
	for {
		c.mu.Lock()
		for i, m := range c.received {
			if matches(m, key, want) && bytes.Contains(m, []byte(has)) {
				c.received = append(c.received[:i], c.received[i+1:]...)
				c.mu.Unlock()
				return m, nil
			}
		}
		c.mu.Unlock()
		select {
		case <-c.arrived:
		case <-c.readDone():
			select {
			case <-c.arrived: // a last message may still be unscanned
				continue
			default:
			}
			return nil, fmt.Errorf("the command's output ended before %s; unmatched: %s", sel, c.leftovers())
		case <-deadline:
			return nil, fmt.Errorf("timed out waiting for %s; received meanwhile: %s", sel, c.leftovers())
		}
	}
}

func matches(msg []byte, key, want string) bool {
	if key == "batch" {
		return msg[0] == '['
	}
	if key == "id" {
		// Most messages waiting are not the one asked for, and their id,
		// near their start, says so without reading a big result: expect
		// scans every message received for each one it waits for.
		if id, ok := leadingMember(msg, "id"); ok && string(id) != want {
			return false
		}
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil {
		return false
	}
	if key == "id" {
		_, isResponse := m["method"]
		return !isResponse && string(m["id"]) == want
	}
	var method string
	json.Unmarshal(m["method"], &method)
	return method == want
}

// leadingMember returns the value of the member key of the JSON object msg
// when it comes before any member of more than a few hundred bytes; false
// when it does not, or msg is no object.
func leadingMember(msg []byte, key string) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		if t == key {
			return v, true
		}
		if len(v) > 256 {
			return nil, false
		}
	}
	return nil, false
}

func (c *client) leftovers() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, len(c.received))
	for i, m := range c.received {
		out[i] = string(m)
	}
	return out
}

// canonical re-encodes a message with sorted keys and no HTML escaping, so
// that golden files do not depend on how the gateway orders its output.
func canonical(line []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}

// waitLog waits for a line of file that contains text.
func waitLog(file, text string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		b, _ := os.ReadFile(file)
		for line := range strings.Lines(string(b)) {
			if strings.Contains(line, text) {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no line containing %q in %s after %v", text, file, limit)
		}
		time.Sleep(10 * time.Millisecond) // polling for an event another process logs
	}
}

func httpDo(method, url string, headers map[string]string) error {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		return err
	}
	for k, v := range headers {
		if strings.EqualFold(k, "Host") {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	fmt.Printf("HTTP %d\n%s", resp.StatusCode, body)
	return err
}
