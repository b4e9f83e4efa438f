package proxy

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
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
	Outcome    string          `json:"outcome"` // ok, error or denied
	ToolError  bool            `json:"tool_error,omitempty"`
	Error      *auditError     `json:"error,omitempty"`
	BytesIn    int             `json:"bytes_in"`
	BytesOut   int             `json:"bytes_out"`
	Params     json.RawMessage `json:"params,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
}

type auditError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

// auditLog appends records to a file, one write per record, so records of
// concurrent requests never interleave.
type auditLog struct {
	bodies bool
	mu     sync.Mutex // serialises writes; held only for one write
	f      *os.File
}

func openAudit(path string, bodies bool) (*auditLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit.path: %w", err)
	}
	return &auditLog{f: f, bodies: bodies}, nil
}

func (a *auditLog) write(r *auditRecord) {
	if a == nil {
		return
	}
	if !a.bodies {
		r.Params, r.Result = nil, nil
	}
	r.Time = time.Now().UTC().Format(time.RFC3339Nano)
	b, err := json.Marshal(r)
	if err != nil {
		return
	}
	b = append(b, '\n')
	a.mu.Lock()
	defer a.mu.Unlock()
	a.f.Write(b)
}

func (a *auditLog) close() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.f.Close()
}
