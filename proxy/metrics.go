package proxy

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpgate/mcpgate/policy"
)

// metrics counts what the gateway does, for Prometheus (text format 0.0.4,
// written here: the standard library has no client).
type metrics struct {
	mu        sync.Mutex
	requests  map[requestKey]uint64
	latency   map[string]*histogram // by server
	decisions map[decisionKey]uint64

	bytesIn, bytesOut atomic.Uint64
}

type requestKey struct{ server, method, outcome string }

// decisionKey labels policy decisions: policy names come from the config
// (and the program's own policies), actions and stages are fixed sets, so
// no client can add a series.
type decisionKey struct{ policy, action, where string }

// latencyBuckets are the histogram's upper bounds, in seconds.
var latencyBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

type histogram struct {
	counts []uint64 // per bucket, not cumulative; one more for +Inf
	sum    float64
	n      uint64
}

func newMetrics() *metrics {
	return &metrics{requests: map[requestKey]uint64{}, latency: map[string]*histogram{}, decisions: map[decisionKey]uint64{}}
}

// observe records one answered client request.
func (m *metrics) observe(r *auditRecord) {
	m.bytesIn.Add(uint64(r.BytesIn))
	m.bytesOut.Add(uint64(r.BytesOut))
	seconds := r.DurationMS / 1000
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests[requestKey{r.Server, methodLabel(r.Method), r.Outcome}]++
	m.countDecisions(r.Decisions)
	h := m.latency[r.Server]
	if h == nil {
		h = &histogram{counts: make([]uint64, len(latencyBuckets)+1)}
		m.latency[r.Server] = h
	}
	i := sort.SearchFloat64s(latencyBuckets, seconds)
	h.counts[i]++
	h.sum += seconds
	h.n++
}

// observeDecisions counts policy decisions made outside a request (on a
// list, when it was fetched).
func (m *metrics) observeDecisions(records []policy.Record) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.countDecisions(records)
}

// countDecisions counts records. m.mu held.
func (m *metrics) countDecisions(records []policy.Record) {
	for _, r := range records {
		m.decisions[decisionKey{r.Policy, r.Action, r.Where}]++
	}
}

// methodLabel is the method as a metrics label: a method mcpgate serves, or
// "other". Every label value is a series kept for the life of the process,
// so a client must not be able to mint them: 20,000 made-up method names
// once cost 1.16 GB and a 201 MB /metrics page. The audit trail keeps the
// name as sent.
func methodLabel(method string) string {
	if m, ok := clientMethods[method]; ok && m.serve != nil {
		return method
	}
	return "other"
}

// WriteMetrics writes the gateway's metrics in the Prometheus text format.
func (g *Gateway) WriteMetrics(w io.Writer) {
	m := g.metrics
	var b strings.Builder
	family := func(name, kind, help string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, kind)
	}

	m.mu.Lock()
	family("mcpgate_requests_total", "counter", "Client requests answered, by the server that handled them, method and outcome.")
	keys := make([]requestKey, 0, len(m.requests))
	for k := range m.requests {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b requestKey) int {
		return strings.Compare(a.server+"\x00"+a.method+"\x00"+a.outcome, b.server+"\x00"+b.method+"\x00"+b.outcome)
	})
	for _, k := range keys {
		fmt.Fprintf(&b, "mcpgate_requests_total{server=%s,method=%s,outcome=%s} %d\n", label(k.server), label(k.method), label(k.outcome), m.requests[k])
	}
	family("mcpgate_request_duration_seconds", "histogram", "Time to answer client requests, by the server that handled them.")
	servers := make([]string, 0, len(m.latency))
	for s := range m.latency {
		servers = append(servers, s)
	}
	slices.Sort(servers)
	for _, s := range servers {
		h := m.latency[s]
		cum := uint64(0)
		for i, le := range latencyBuckets {
			cum += h.counts[i]
			fmt.Fprintf(&b, "mcpgate_request_duration_seconds_bucket{server=%s,le=\"%g\"} %d\n", label(s), le, cum)
		}
		fmt.Fprintf(&b, "mcpgate_request_duration_seconds_bucket{server=%s,le=\"+Inf\"} %d\n", label(s), h.n)
		fmt.Fprintf(&b, "mcpgate_request_duration_seconds_sum{server=%s} %s\n", label(s), float(h.sum))
		fmt.Fprintf(&b, "mcpgate_request_duration_seconds_count{server=%s} %d\n", label(s), h.n)
	}
	family("mcpgate_policy_decisions_total", "counter", "Policy decisions other than a plain allow, by policy, action (audit, modify, deny) and where (request, result, list).")
	dkeys := make([]decisionKey, 0, len(m.decisions))
	for k := range m.decisions {
		dkeys = append(dkeys, k)
	}
	slices.SortFunc(dkeys, func(a, b decisionKey) int {
		return strings.Compare(a.policy+"\x00"+a.action+"\x00"+a.where, b.policy+"\x00"+b.action+"\x00"+b.where)
	})
	for _, k := range dkeys {
		fmt.Fprintf(&b, "mcpgate_policy_decisions_total{policy=%s,action=%s,where=%s} %d\n", label(k.policy), label(k.action), label(k.where), m.decisions[k])
	}
	m.mu.Unlock()

	family("mcpgate_upstream_up", "gauge", "1 if the upstream server is connected (for one run per session: any instance), else 0.")
	for _, u := range g.live().upstreams {
		up := 0
		if u.anyConnected() {
			up = 1
		}
		fmt.Fprintf(&b, "mcpgate_upstream_up{server=%s} %d\n", label(u.name), up)
	}
	family("mcpgate_upstream_instances", "gauge", "Instances running of a server run once per client session (isolation \"session\").")
	for _, u := range g.live().upstreams {
		if u.isolatedBase() {
			fmt.Fprintf(&b, "mcpgate_upstream_instances{server=%s} %d\n", label(u.name), u.instanceCount())
		}
	}
	family("mcpgate_upstream_requests_in_flight", "gauge", "Requests sent to the upstream server and not yet answered (for one run per session: all instances).")
	ups := g.live().upstreams
	queued := make([]int, len(ups))
	for i, u := range ups {
		var inFlight int
		inFlight, queued[i] = u.limit.counts()
		fmt.Fprintf(&b, "mcpgate_upstream_requests_in_flight{server=%s} %d\n", label(u.name), inFlight)
	}
	family("mcpgate_upstream_requests_queued", "gauge", "Requests waiting for a place among the server's max_concurrent.")
	for i, u := range ups {
		fmt.Fprintf(&b, "mcpgate_upstream_requests_queued{server=%s} %d\n", label(u.name), queued[i])
	}
	family("mcpgate_upstream_starts_in_progress", "gauge", "Upstream servers being started (connection and handshake) now: at most start_concurrency.")
	fmt.Fprintf(&b, "mcpgate_upstream_starts_in_progress %d\n", g.starts.starting.Load())
	family("mcpgate_upstream_starts_waiting", "gauge", "Upstream servers waiting to start, past start_concurrency.")
	fmt.Fprintf(&b, "mcpgate_upstream_starts_waiting %d\n", g.starts.waiting.Load())
	family("mcpgate_upstream_restarts_total", "counter", "Times the upstream server was connected again after losing it.")
	for _, u := range g.live().upstreams {
		fmt.Fprintf(&b, "mcpgate_upstream_restarts_total{server=%s} %d\n", label(u.name), u.restartsSoFar())
	}
	g.mu.Lock()
	sessions := len(g.sessions)
	g.mu.Unlock()
	family("mcpgate_sessions", "gauge", "Client sessions connected now.")
	fmt.Fprintf(&b, "mcpgate_sessions %d\n", sessions)
	family("mcpgate_bytes_total", "counter", "Bytes of client requests (in) and of the answers to them (out).")
	fmt.Fprintf(&b, "mcpgate_bytes_total{direction=\"in\"} %d\n", m.bytesIn.Load())
	fmt.Fprintf(&b, "mcpgate_bytes_total{direction=\"out\"} %d\n", m.bytesOut.Load())
	if g.audit != nil {
		family("mcpgate_audit_write_failures_total", "counter", "Audit records that could not be written in full (lost).")
		fmt.Fprintf(&b, "mcpgate_audit_write_failures_total %d\n", g.audit.failureCount())
	}
	io.WriteString(w, b.String())
}

// MetricsHandler serves WriteMetrics over HTTP.
func (g *Gateway) MetricsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		g.WriteMetrics(w)
	})
}

// label quotes a label value as the text format asks.
func label(v string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v) + `"`
}

func float(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return "0"
	}
	return fmt.Sprintf("%g", f)
}
