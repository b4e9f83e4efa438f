package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/internal/auditchain"
	"github.com/mcpgate/mcpgate/internal/rawjson"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/policy"
)

// auditRecord is one line of the audit trail: one client request. Other
// lines (event) say what else happened; the chain adds "prev" to each.
type auditRecord struct {
	Time       string          `json:"time"`
	Session    string          `json:"session"`
	Method     string          `json:"method"`
	Protocol   string          `json:"protocol,omitempty"` // a modern request's protocol version (legacy ones: see session_opened)
	Client     string          `json:"client,omitempty"`   // a modern request's clientInfo name, as the client says
	Server     string          `json:"server"`             // the upstream that handled it; "mcpgate" when answered locally; "*" for a fan-out
	Servers    []string        `json:"servers,omitempty"`  // for a fan-out: the upstreams that answered
	Name       string          `json:"name,omitempty"`     // tool, prompt or URI as the client named it
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

	// policies are the handling server's: with include_bodies, the bodies
	// are kept only after its redactors (and the default ones) have run on
	// them, so that the audit trail never keeps the secret it reports.
	policies policy.Chain
	// decideLater: the answer's decisions that only record may be left
	// running (policy.Chain.RunAhead), and rest, when some were, waits for
	// them: the record is written once they are made (see decidelater.go).
	decideLater bool
	rest        func() []policy.Record
	lateBytes   int64 // of the late budget, while rest is left running (see reserveLate)
	// later: the record has a place reserved in the queue of records
	// written off the reader (see auditlater.go).
	later bool
	// id is the request's, for ID when it is nil: its bytes are made only
	// for a record written (see write), not on every call.
	id jsonrpc.ID
}

// routed names the upstream that handles the request.
func (r *auditRecord) routed(rt route, name string) {
	r.Server, r.Name, r.Upstream = rt.up.name, name, rt.name
	if sp := rt.up.base.policies.Load(); sp != nil {
		r.policies = sp.chain
	}
}

type auditError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

// auditLog writes the audit trail: a hash chain of records (see package
// auditchain), one write per record, so records of concurrent requests
// never interleave.
//
// A failed write (a full disk, a lost mount) does not stop the gateway:
// requests go on being served, and the records are lost until writes
// succeed again. Refusing requests instead would let a full disk take every
// tool away from every client; the operator hears of it instead: logged
// once per episode (and once when it ends, and in the trail itself),
// counted in /metrics, reported by /readyz, and Close returns an error (so
// mcpgate exits with status 1).
type auditLog struct {
	bodies atomic.Bool // audit.include_bodies; Reload changes it
	log    *slog.Logger
	redact func(string) string // applied to every string in a record
	w      *auditchain.Writer
	later  *auditLater // inline calls' records, written off the reader
}

func openAudit(cfg config.Audit, log *slog.Logger, redact func(string) string) (*auditLog, error) {
	w, err := auditchain.Open(cfg.Path, chainOptions(cfg, log))
	if err != nil {
		return nil, fmt.Errorf("audit.path: %w", err)
	}
	a := &auditLog{w: w, log: log, redact: redact}
	a.bodies.Store(cfg.IncludeBodies)
	a.startLater()
	return a, nil
}

func chainOptions(cfg config.Audit, log *slog.Logger) auditchain.Options {
	opts := auditchain.Options{MaxBytes: cfg.MaxBytes, MaxAge: cfg.MaxAge, Log: log, Replica: cfg.Replica}
	switch cfg.Sync {
	case config.SyncAlways:
		opts.Sync = auditchain.SyncAlways
	case config.SyncNone:
		opts.Sync = auditchain.SyncNone
	}
	return opts
}

// write appends a request's record. With audit.sync "always" it returns
// once the record is on the disk: a response leaves after its record.
func (a *auditLog) write(r *auditRecord) {
	if a == nil {
		return
	}
	if r.ID == nil && r.id.IsValid() {
		r.ID = json.RawMessage(r.id.String())
	}
	if a.bodies.Load() {
		r.Params = redactBody(r.policies, r.Params)
		r.Result = redactBody(r.policies, r.Result)
	} else {
		r.Params, r.Result = nil, nil
	}
	if r.Error != nil && len(r.Error.Message) > maxAuditErrorMessage {
		e := *r.Error // the caller's stays whole: the client gets it so
		e.Message = cutMessage(e.Message)
		r.Error = &e
	}
	r.Time = time.Now().UTC().Format(auditchain.TimeFormat)
	b, err := json.Marshal(r)
	switch {
	case err != nil && r.later:
		a.cancelLater()
	case err != nil:
	case r.later:
		a.appendLater(redactJSON(b, a.redact))
	default:
		a.append(b)
	}
}

// maxAuditErrorMessage bounds the part of an error's message a record
// keeps: a server's message is its own text, up to max_message_bytes, and
// is recorded whether or not bodies are.
const maxAuditErrorMessage = 1 << 10

// cutMessage is msg cut to maxAuditErrorMessage bytes (at a character's
// start), saying how long it was.
func cutMessage(msg string) string {
	cut := maxAuditErrorMessage
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes in all)", msg[:cut], len(msg))
}

// redactBody is body as the audit trail may keep it: without what the
// secrets and pii detectors find; nil when that cannot be made sure of.
func redactBody(policies policy.Chain, body json.RawMessage) json.RawMessage {
	out, err := policies.RedactBody(body)
	if err != nil {
		return nil
	}
	return out
}

// event appends a record of something other than a client's request:
// kind names it ("session_opened", "upstream_disconnected", …), and attrs
// are its fields as key, value pairs, in order, as slog takes them:
//
//	g.audit.event("pin_violation", "server", "fs", "tool", "read", "fields", []string{"description"})
//
// Values are encoded as JSON; strings are redacted like every record.
func (a *auditLog) event(kind string, attrs ...any) {
	if a == nil {
		return
	}
	a.append(eventRecord(kind, attrs...))
}

// eventRecord is event's record.
func eventRecord(kind string, attrs ...any) []byte {
	if len(attrs)%2 != 0 {
		panic(fmt.Sprintf("audit event %s: attrs must be key, value pairs", kind))
	}
	b := []byte(`{"time":`)
	b = rawjson.AppendString(b, time.Now().UTC().Format(auditchain.TimeFormat))
	b = append(b, `,"event":`...)
	b = rawjson.AppendString(b, kind)
	for i := 0; i < len(attrs); i += 2 {
		key, _ := attrs[i].(string)
		v, err := json.Marshal(attrs[i+1])
		if err != nil {
			v, _ = json.Marshal(fmt.Sprint(attrs[i+1]))
		}
		b = append(b, ',')
		b = rawjson.AppendString(b, key)
		b = append(b, ':')
		b = append(b, v...)
	}
	return append(b, '}')
}

func (a *auditLog) append(record []byte) {
	a.appendInOrder(redactJSON(record, a.redact))
}

// report tells the operator where an episode of failed writes begins and
// ends.
func (a *auditLog) report(res auditchain.Result) {
	switch {
	case res.Began:
		a.log.Error("audit trail write failed: records are lost until writes succeed again; requests are still served", "err", res.Err)
	case res.Ended:
		a.log.Warn("audit trail writes succeed again", "lost_records", res.Lost)
		// Appended at once, not in order behind queued records (see
		// appendInOrder): this may be the writer goroutine of that queue,
		// or a reader, which must not wait.
		a.report(a.w.Append(redactJSON(eventRecord("audit_records_lost", "records", res.Lost), a.redact)))
	}
}

// isFailing reports whether the last write failed; nil: no audit trail.
func (a *auditLog) isFailing() bool { return a != nil && a.w.Failing() }

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

func (a *auditLog) failureCount() uint64 { return a.w.Failures() }

// close flushes and closes the file. Records lost along the way make it an
// error, so that a run that lost any is not reported as clean.
func (a *auditLog) close() error {
	if a == nil {
		return nil
	}
	a.closeLater()
	err := a.w.Close()
	if n := a.w.Failures(); n > 0 {
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
