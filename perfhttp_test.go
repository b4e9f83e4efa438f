package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// perfHTTPClient is the benchmarks' load generator over Streamable HTTP:
// one session, connections kept alive (as many as calls in flight), each
// answer read as far as its id whether it comes as JSON or as an event
// stream.
type perfHTTPClient struct {
	url     string
	http    *http.Client
	session string // Mcp-Session-Id, once initialized
	nextID  atomic.Int64
	bufs    sync.Pool // *bytes.Buffer for answers read whole
	events  sync.Pool // *bufio.Reader for event streams (eventReadSize)
}

// eventReadSize is an event stream's read buffer: a big result's event,
// as the fake's own endpoint sends it, is read in reads that size, as a
// JSON answer is read in big ones; 16 KiB made the baseline of
// BenchmarkPerfHTTPBigResult 3,200 reads for 50 MiB against mcpgate's few
// dozen.
const eventReadSize = 256 << 10

func newPerfHTTPClient(url string, conns int) *perfHTTPClient {
	transport := &http.Transport{
		Proxy:               nil, // loopback, never through the environment's proxy
		MaxIdleConnsPerHost: conns,
		DisableCompression:  true,
		IdleConnTimeout:     time.Minute,
	}
	return &perfHTTPClient{
		url:    url,
		http:   &http.Client{Transport: transport, Timeout: 2 * time.Minute},
		bufs:   sync.Pool{New: func() any { return new(bytes.Buffer) }},
		events: sync.Pool{New: func() any { return bufio.NewReaderSize(nil, eventReadSize) }},
	}
}

func (c *perfHTTPClient) initialize() error {
	params := []byte(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"perf","version":"1"}}`)
	resp, err := c.post(appendRequest(nil, c.nextID.Add(1), "initialize", params))
	if err != nil {
		return err
	}
	c.session = resp.Header.Get("Mcp-Session-Id")
	if a := c.readAnswer(resp, 1); a.err != nil {
		return a.err
	}
	resp, err = c.post([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("perf client: notifications/initialized: HTTP %s", resp.Status)
	}
	return nil
}

// call sends a request and waits for its answer.
func (c *perfHTTPClient) call(method string, params []byte) perfAnswer {
	id := c.nextID.Add(1)
	resp, err := c.post(appendRequest(nil, id, method, params))
	if err != nil {
		return perfAnswer{err: err}
	}
	return c.readAnswer(resp, id)
}

func (c *perfHTTPClient) post(body []byte) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	return c.http.Do(req)
}

// readAnswer reads the answer to request id from resp and closes it, read
// to its end so that the connection is kept for the next request.
func (c *perfHTTPClient) readAnswer(resp *http.Response, id int64) perfAnswer {
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return perfAnswer{err: fmt.Errorf("perf client: HTTP %s: %s", resp.Status, body)}
	}
	buf := c.bufs.Get().(*bytes.Buffer)
	defer c.bufs.Put(buf)
	buf.Reset()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		r := c.events.Get().(*bufio.Reader)
		defer c.events.Put(r)
		r.Reset(resp.Body)
		defer r.Reset(nil)
		return readEventAnswer(r, id, buf)
	}
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return perfAnswer{err: err}
	}
	reply := scanReply(buf.Bytes())
	if !reply.hasID || reply.id != id {
		return perfAnswer{err: fmt.Errorf("perf client: the answer to %d came with another id", id)}
	}
	return perfAnswer{err: reply.err(), size: buf.Len()}
}

// readEventAnswer reads an event stream until the answer to id, then to
// its end. The fakes and mcpgate write an answer as one data line; one
// longer than the reader's buffer is gathered in long, reused across calls
// as a JSON answer's buffer is.
func readEventAnswer(r *bufio.Reader, id int64, long *bytes.Buffer) perfAnswer {
	answer := perfAnswer{err: errors.New("perf client: the event stream ended without the answer")}
	found := false
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long.Reset()
			long.Write(line)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				long.Write(line)
			}
			line = long.Bytes()
		}
		if data, ok := bytes.CutPrefix(line, []byte("data:")); ok && !found {
			if reply := scanReply(data); reply.hasID && reply.id == id && !reply.isRequest {
				answer, found = perfAnswer{err: reply.err(), size: len(data)}, true
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return answer
			}
			return perfAnswer{err: err}
		}
	}
}
