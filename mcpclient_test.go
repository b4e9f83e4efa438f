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
	"strings"
	"sync"
	"syscall"
	"time"
)

// mcpclient plays a session file against a command it starts, speaking MCP
// over the command's stdin and stdout, as Claude Desktop does.
//
//	mcpclient [-timeout 10s] SESSION COMMAND [ARG...]
//
// Session lines:
//
//	send JSON            write one message
//	init [VERSION [CAPS]] initialize (default 2025-11-25, capabilities {}) and send initialized; prints nothing
//	expect id=ID         wait for the response to ID and print it
//	expect method=M      wait for a message with method M and print it
//	expect batch         wait for a JSON array (a batch response) and print it
//	expect SEL has=TEXT  as above, for a message whose canonical JSON contains TEXT
//	write FILE           create FILE (to release a fake's wait_for_file)
//	get URL              HTTP GET URL ($VARs expanded) and print the status and body
//	close                close the command's stdin and wait for it to exit
//	signal TERM|INT      send the command a signal and wait for it to exit
//	# ...                comment
//
// Each printed message is canonical JSON (sorted keys), one per line. When
// the session ends, stdin is closed, the exit status is printed, and any
// message never expected is printed as "unexpected: JSON".
func mcpClientMain(args []string) int {
	fs := flag.NewFlagSet("mcpclient", flag.ContinueOnError)
	timeout := fs.Duration("timeout", 10*time.Second, "how long each expect waits")
	if err := fs.Parse(args); err != nil || fs.NArg() < 2 {
		fmt.Fprintln(os.Stderr, "usage: mcpclient [-timeout D] SESSION COMMAND [ARG...]")
		return 2
	}
	session, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpclient:", err)
		return 2
	}
	cmd := exec.Command(fs.Arg(1), fs.Args()[2:]...)
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "mcpclient:", err)
		return 1
	}
	c := &client{stdin: stdin, timeout: *timeout, arrived: make(chan struct{}, 1), done: make(chan struct{})}
	go c.read(stdout)
	exited := make(chan error, 1)
	closed := false
	// end stops the command (closing its stdin, or with a signal) and
	// waits for it to exit.
	end := func(sig os.Signal) bool {
		if closed {
			return true
		}
		closed = true
		if sig != nil {
			cmd.Process.Signal(sig)
		} else {
			stdin.Close()
		}
		go func() { <-c.readDone(); exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			}
			fmt.Printf("exit %d\n", code)
			return true
		case <-time.After(*timeout):
			fmt.Fprintln(os.Stderr, "mcpclient: the command did not exit")
			cmd.Process.Kill()
			return false
		}
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
			_, err = io.WriteString(stdin, rest+"\n")
		case "init":
			version, caps, _ := strings.Cut(rest, " ")
			if version == "" {
				version = "2025-11-25"
			}
			if caps == "" {
				caps = "{}"
			}
			io.WriteString(stdin, fmt.Sprintf(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"mcpclient","version":"1"}}}`+"\n", version, caps))
			if _, err = c.expect("id=\"init\""); err == nil {
				_, err = io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
			}
		case "expect":
			var msg []byte
			if msg, err = c.expect(rest); err == nil {
				fmt.Println(string(msg))
			}
		case "write":
			err = os.WriteFile(rest, nil, 0o644)
		case "get":
			err = httpGet(os.ExpandEnv(rest))
		case "close":
			if !end(nil) {
				err = errors.New("close failed")
			}
		case "signal":
			if rest != "TERM" && rest != "INT" {
				err = errors.New("signal TERM or signal INT")
			} else if !end(map[string]os.Signal{"TERM": syscall.SIGTERM, "INT": os.Interrupt}[rest]) {
				err = errors.New("the command did not exit after the signal")
			}
		default:
			err = fmt.Errorf("unknown verb %q", verb)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "mcpclient: %s:%d: %s: %v\n", fs.Arg(0), n+1, line, err)
			ok = false
			break
		}
	}
	if !end(nil) {
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

type client struct {
	stdin   io.Writer
	timeout time.Duration

	mu       sync.Mutex
	received [][]byte      // canonical messages not yet expected
	done     chan struct{} // closed when the command's output ended
	arrived  chan struct{} // 1-buffered: poked on each arrival
}

func (c *client) readDone() <-chan struct{} { return c.done }

func (c *client) read(r io.Reader) {
	defer close(c.done)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			canon, cerr := canonical(line)
			if cerr != nil {
				canon = []byte(fmt.Sprintf("NOT JSON: %q", line))
			}
			c.mu.Lock()
			c.received = append(c.received, canon)
			c.mu.Unlock()
			select {
			case c.arrived <- struct{}{}:
			default:
			}
		}
		if err != nil {
			return
		}
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

func httpGet(url string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	fmt.Printf("HTTP %d\n%s", resp.StatusCode, body)
	return err
}
