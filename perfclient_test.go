package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// perfClient is the benchmarks' load generator over stdio: a client as lean
// as a client can be, so that what it costs is small and the same for
// every peer it drives. It builds each request by appending bytes, and
// reads each answer only as far as its id and whether it is a result.
// It depends on nothing the gateway uses (not the jsonrpc package), so the
// floor does not move when the gateway's own code changes.
type perfClient struct {
	writeMu sync.Mutex // held for one whole write: one writer per connection
	w       io.Writer

	mu      sync.Mutex
	waiting map[int64]chan<- perfAnswer // by request id
	readErr error                       // set once the reader stops; guarded by mu
	nextID  int64                       // guarded by mu

	done chan struct{} // closed when the reader stops
}

func newPerfClient(r io.Reader, w io.Writer) *perfClient {
	c := &perfClient{w: w, waiting: map[int64]chan<- perfAnswer{}, done: make(chan struct{})}
	go c.read(r)
	return c
}

// perfAnswer is what a call learns of its answer.
type perfAnswer struct {
	err  error // nil for a result; the JSON-RPC error otherwise
	size int   // the answer's bytes
}

// call sends a request whose params are already JSON and waits for its
// answer. answered is the caller's own 1-buffered channel, reused across
// calls.
func (c *perfClient) call(method string, params []byte, answered chan perfAnswer) perfAnswer {
	c.mu.Lock()
	if c.readErr != nil {
		c.mu.Unlock()
		return perfAnswer{err: c.readErr}
	}
	c.nextID++
	id := c.nextID
	c.waiting[id] = answered
	c.mu.Unlock()
	if err := c.write(appendRequest(nil, id, method, params)); err != nil {
		return perfAnswer{err: err}
	}
	select {
	case a := <-answered:
		return a
	case <-c.done:
		select {
		case a := <-answered: // answered just before the reader stopped
			return a
		default:
		}
		return perfAnswer{err: c.readErr}
	}
}

// notify sends a notification.
func (c *perfClient) notify(method string) error {
	return c.write([]byte(`{"jsonrpc":"2.0","method":"` + method + `"}` + "\n"))
}

func (c *perfClient) write(msg []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.w.Write(msg)
	return err
}

// read answers the calls waiting, until the peer closes its stdout.
func (c *perfClient) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte // a line longer than the buffer, gathered; reused
	grown := false  // r's pipe raised, as mcpgate raises its own (growPerfPipe)
	var err error
	for {
		var line []byte
		line, err = br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				if len(long) >= perfGrowPipeAt && !grown {
					grown = true
					growPerfPipe(r)
				}
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil {
			break
		}
		reply := scanReply(line)
		if !reply.hasID || reply.isRequest {
			continue // a notification, or a request to the client: not ours to count
		}
		c.mu.Lock()
		answered := c.waiting[reply.id]
		delete(c.waiting, reply.id)
		c.mu.Unlock()
		if answered != nil {
			answered <- perfAnswer{err: reply.err(), size: len(line)}
		}
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	c.mu.Lock()
	c.readErr = fmt.Errorf("perf client: the peer's stdout: %w", err)
	c.mu.Unlock()
	close(c.done)
}

// appendRequest appends one JSON-RPC request line to buf.
func appendRequest(buf []byte, id int64, method string, params []byte) []byte {
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = strconv.AppendInt(buf, id, 10)
	buf = append(buf, `,"method":"`...)
	buf = append(buf, method...)
	buf = append(buf, '"')
	if params != nil {
		buf = append(buf, `,"params":`...)
		buf = append(buf, params...)
	}
	return append(buf, "}\n"...)
}
