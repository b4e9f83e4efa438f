package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/policy"
)

// auditRecord is one line of the audit trail: one client request.
type auditRecord struct {
	Time       string          `json:"time"`
	Session    string          `json:"session"`
	Method     string          `json:"method"`
	Server     string          `json:"server"`            // the upstream that handled it; "mcpgate" when answered locally; "*" for a fan-out
	Servers    []string        `json:"servers,omitempty"` // for a fan-out: the upstreams that answered
	Name       string          `json:"name,omitempty"`    // tool, prompt or URI as the client named it
	Upstream   string          `json:"upstream_name,omitempty"`
	ID         json.RawMessage `json:"id"`
	DurationMS float64         `json:"duration_ms"`
	Outcome    string          `json:"outcome"` // ok, error, or denied (by a policy)
	ToolError  bool            `json:"tool_error,omitempty"`
	Error      *auditError     `json:"error,omitempty"`
	Decisions  []policy.Record `json:"decisions,omitempty"` // every policy decision other than a plain allow
	BytesIn    int             `json:"bytes_in"`
	BytesOut   int             `json:"bytes_out"`
	Params     json.RawMessage `json:"params,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`

	// A body in which a policy found something it did not take out (it
	// denied or only audited) is not kept, even with include_bodies: the
	// audit trail must not keep the secret it reports.
	paramsHeld, resultHeld bool
}

type auditError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

// auditLog appends records to a file, one write per record, so records of
// concurrent requests never interleave.
//
// A failed write (a full disk, a lost mount) does not stop the gateway:
// requests go on being served, and the records are lost until writes
// succeed again. Refusing requests instead would let a full disk take every
// tool away from every client; the operator hears of it instead: logged
// once per episode (and once when it ends), counted in /metrics, reported
// by /readyz, and Close returns an error (so mcpgate exits with status 1).
type auditLog struct {
	bodies   bool
	log      *slog.Logger
	redact   func(string) string // applied to every string in a record
	failures atomic.Uint64       // records not written in full, ever
	failing  atomic.Bool         // the last write failed

	mu   sync.Mutex // serialises writes; held only for one write
	w    io.WriteCloser
	torn bool // guarded by mu: the file may end mid-record, after a short write
	lost int  // guarded by mu: records lost in the current episode
}

func openAudit(path string, bodies bool, log *slog.Logger, redact func(string) string) (*auditLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit.path: %w", err)
	}
	return newAuditLog(f, bodies, log, redact), nil
}

func newAuditLog(w io.WriteCloser, bodies bool, log *slog.Logger, redact func(string) string) *auditLog {
	return &auditLog{w: w, bodies: bodies, log: log, redact: redact}
}

func (a *auditLog) write(r *auditRecord) {
	if a == nil {
		return
	}
	if !a.bodies {
		r.Params, r.Result = nil, nil
	}
	if r.paramsHeld {
		r.Params = nil
	}
	if r.resultHeld {
		r.Result = nil
	}
	r.Time = time.Now().UTC().Format(time.RFC3339Nano)
	b, err := json.Marshal(r)
	if err != nil {
		return
	}
	b = append(redactJSON(b, a.redact), '\n')
	a.mu.Lock()
	if a.torn {
		// A record cut short must not swallow this one: end its line
		// first. The fragment stays, as a line that is not valid JSON.
		b = append([]byte{'\n'}, b...)
	}
	n, err := a.w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if n > 0 {
		// Records hold no raw newline: the file ends mid-line unless the
		// last byte written ended a line.
		a.torn = b[n-1] != '\n'
	}
	began, ended, lost := false, false, 0
	if err != nil {
		a.failures.Add(1)
		began = a.lost == 0
		a.lost++
	} else if a.lost > 0 {
		ended, lost = true, a.lost
		a.lost = 0
	}
	a.failing.Store(err != nil)
	a.mu.Unlock()
	switch {
	case began:
		a.log.Error("audit trail write failed: records are lost until writes succeed again; requests are still served", "err", err)
	case ended:
		a.log.Warn("audit trail writes succeed again", "lost_records", lost)
	}
}

// isFailing reports whether the last write failed; nil: no audit trail.
func (a *auditLog) isFailing() bool { return a != nil && a.failing.Load() }

// state is what /readyz says of the audit trail: "ok", "failing", or ""
// without one. A failing trail does not change readiness: requests are
// still served, and taking the gateway out of service would refuse them
// by another route.
func (a *auditLog) state() string {
	switch {
	case a == nil:
		return ""
	case a.isFailing():
		return "failing"
	}
	return "ok"
}

func (a *auditLog) failureCount() uint64 { return a.failures.Load() }

// close closes the file. Records lost along the way make it an error, so
// that a run that lost any is not reported as clean.
func (a *auditLog) close() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	err := a.w.Close()
	if n := a.failures.Load(); n > 0 {
		return errors.Join(fmt.Errorf("audit.path: %d records could not be written (see the log)", n), err)
	}
	return err
}

// responseSize is the length of the encoded response carrying result or
// err, without encoding it again.
func responseSize(id jsonrpc.ID, result []byte, err *jsonrpc.Error) int {
	if err != nil {
		return len((&jsonrpc.Message{ID: id, Error: err}).Encode())
	}
	return len(`{"jsonrpc":"2.0","id":,"result":}`) + len(id.String()) + max(len(result), 2)
}
