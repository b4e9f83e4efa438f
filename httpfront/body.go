package httpfront

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/mcpgate/mcpgate/internal/rawjson"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Reading request bodies: each up to max_message_bytes, and all of them
// together within a budget.

// bodyBudgetBytes bounds the request bodies being read at once, front-wide:
// each may be up to max_message_bytes (16 MiB by default), and without a
// bound many concurrent POSTs could take any amount of memory. Past it a
// POST is refused at once rather than read.
const bodyBudgetBytes = 256 << 20

// bodyBudget counts the bytes of request bodies being read. Each read
// reserves what its buffer holds (see readAnnouncedWithin: what arrived, and a
// few times that ahead), before it grows, and gives it back after: the
// body read is then the session's (bounded by its queues), or gone.
// Counted as announced (Content-Length, or the message limit), sixteen
// connections announcing 16 MiB and sending a byte held the whole budget,
// and every other POST was refused while they stalled.
//
// Every POST reserves and gives back twice (its read, then its request
// held while it runs), on one count for the whole front: a compare-and-swap
// on it, not a lock taken and released (two atomic writes on a line every
// core shares).
type bodyBudget struct {
	max      int64        // bodyBudgetBytes, or the message limit if larger
	reading  atomic.Int64 // reserved by the reads in progress
	refusing atomic.Bool  // a read was refused since the last one allowed: the episode is logged
}

// reserve takes n bytes if they fit; first reports the first refusal of an
// episode.
func (b *bodyBudget) reserve(n int64) (ok, first bool) {
	for {
		reading := b.reading.Load()
		if reading+n > b.max {
			return false, !b.refusing.Swap(true)
		}
		if b.reading.CompareAndSwap(reading, reading+n) {
			if b.refusing.Load() {
				b.refusing.Store(false)
			}
			return true, false
		}
	}
}

// budgetedRead is one body's read within a budget: what it reserved, to
// be given back once the body is read, and whether a refusal was the first
// of an episode (to be logged).
type budgetedRead struct {
	budget       *bodyBudget
	reserved     int64
	firstRefusal bool
}

// take reserves n more bytes for the body; true without a bound (nil).
func (rd *budgetedRead) take(n int) bool {
	if rd == nil {
		return true
	}
	ok, first := rd.budget.reserve(int64(n))
	if !ok {
		rd.firstRefusal = first
		return false
	}
	rd.reserved += int64(n)
	return true
}

func (b *bodyBudget) release(n int64) {
	b.reading.Add(-n)
}

func (b *bodyBudget) inUse() int64 {
	return b.reading.Load()
}

// readBody reads a request body up to the message limit, within the
// front's body budget.
func (f *Front) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	limit := f.g.Config().MaxMessage
	rd := budgetedRead{budget: &f.bodies}
	defer func() { f.bodies.release(rd.reserved) }()
	if br := bodyReaderOf(r); br != nil { // see connbody.go
		br.ReadingBody(true)
		defer br.ReadingBody(false)
	}
	// The read deadline (set in ServeHTTP) stays on unless the whole body
	// came in: what is left of a body that stalled or is too large must
	// not hold the connection while net/http reads it.
	body, err := readAnnouncedWithin(r.Body, r.ContentLength, limit+1, &rd)
	if errors.Is(err, errBodyBudget) {
		if rd.firstRefusal {
			f.g.Logger().Warn("HTTP requests refused: too many request bodies being read at once", "budget_bytes", f.bodies.max)
		}
		// The body is not read to its end, so the id of the request in it
		// is not known: the error carries none.
		w.Header().Set("Connection", "close") // the body is still on the wire
		w.Header().Set("Retry-After", "1")
		jsonError(w, http.StatusServiceUnavailable, jsonrpc.ID{}, jsonrpc.Errorf(jsonrpc.ErrInternal,
			"mcpgate is reading too many request bodies at once (%d MiB in all); try again shortly", f.bodies.max>>20))
		return nil, false
	}
	if err != nil {
		w.Header().Set("Connection", "close") // the rest of the body is still on the wire
		http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
		return nil, false
	}
	if len(body) > limit {
		prefix := body[:min(len(body), 64<<10)]
		id := jsonrpc.ID{}
		if ms, _ := rawjson.Members(prefix); ms != nil {
			if raw, ok := ms.Get("id"); ok {
				id, _ = jsonrpc.ParseID(raw)
			}
		}
		jsonError(w, http.StatusRequestEntityTooLarge, id, jsonrpc.Errorf(jsonrpc.ErrInvalidRequest, "message exceeds the limit of %d bytes", limit))
		return nil, false
	}
	// The read deadline is lifted already: net/http lifts it when the
	// body reads to its end (its background read begins), as it did here.
	// Closed once read to its end: net/http then knows it is done with,
	// and does not read it again, to its end, before the answer
	// (chunkWriter's discard, with a buffer and an allocation per request).
	r.Body.Close()
	return oneLine(body), true
}

// oneLine returns a JSON body without line breaks. JSON allows them between
// tokens, and the gateway passes params on byte for byte, but a stdio
// server reads one message per line: a pretty-printed request would reach
// it broken, and whatever followed a break would be read as a message of
// its own, past every check (a client could send a server any request).
// Inside strings line breaks are always escaped, so only whitespace goes.
// Around the value it is only trimmed: many clients end a body with a
// newline (Go's json.Encoder does), and compacting a whole body for it
// would scan and copy every message again.
func oneLine(body []byte) []byte {
	body = bytes.Trim(body, " \t\r\n") // JSON's whitespace, no other
	if bytes.IndexByte(body, '\n') < 0 && bytes.IndexByte(body, '\r') < 0 {
		return body
	}
	var b bytes.Buffer
	if json.Compact(&b, body) != nil {
		return body // not JSON: answered as such, and never passed on
	}
	return b.Bytes()
}

// bodyFirst is the most of a body's announced length that is allocated
// before any of it arrived, and bodyAhead how many times what arrived the
// buffer may grow to: a client announcing 64 MiB and sending a few bytes
// must not have the gateway hold 64 MiB for it, nor take that much of the
// body budget, which counts what the buffers hold. Small enough that the
// connections mcpgate holds (4096) cannot take half the budget before
// sending anything.
const (
	bodyFirst = 32 << 10
	bodyAhead = 8
)

// errBodyBudget: a body's buffer could not grow within the body budget.
var errBodyBudget = errors.New("too many request bodies being read at once")

// readAnnouncedWithin reads a body of announced bytes (-1: not known) up
// to most bytes (and perhaps a little more), each buffer's bytes taken
// from rd's budget first (nil: no bound): errBodyBudget when they do not
// fit. A body up to bodyFirst that announced its length is read into one
// buffer of its size; io.ReadAll would start small and grow it several
// times. A bigger one is read into a buffer that grows to its size in a
// few steps, each at most bodyAhead times what came.
func readAnnouncedWithin(body io.Reader, announced int64, most int, rd *budgetedRead) ([]byte, error) {
	size := most
	if announced >= 0 && announced < int64(most) {
		size = int(announced)
	}
	room := min(size, bodyFirst) + bytes.MinRead
	if announced >= 0 && size <= bodyFirst {
		// One byte over what was announced is room for the read that
		// sees the end (net/http's body gives it with the last bytes); a
		// small request's buffer was otherwise mostly MinRead's slack.
		room = size + 1
	}
	if !rd.take(room) {
		return nil, errBodyBudget
	}
	buf := make([]byte, 0, room)
	for len(buf) < most {
		if len(buf) == cap(buf) {
			next := min(bodyAhead*len(buf), most)
			if size > len(buf) {
				next = min(next, size)
			}
			if !rd.take(next + bytes.MinRead - cap(buf)) {
				return buf, errBodyBudget
			}
			buf = append(make([]byte, 0, next+bytes.MinRead), buf...)
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}
