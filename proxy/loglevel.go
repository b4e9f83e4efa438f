package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"

	"github.com/mcpgate/mcpgate/internal/rawjson"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Log levels: the client's logging/setLevel, passed on to the servers,
// and servers' log messages relayed to the clients that want them.

var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// setLevel records the client's log level and passes the most verbose level
// any client wants to every upstream that logs, answering once all replied.
func (s *session) setLevel(ctx context.Context, params json.RawMessage, rec *auditRecord) (json.RawMessage, error) {
	var p struct {
		Level string `json:"level"`
	}
	if json.Unmarshal(params, &p) != nil || logRank(p.Level) < 0 {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "params.level must be one of %s", strings.Join(logLevels, ", "))
	}
	s.mu.Lock()
	s.logLevel = p.Level
	s.mu.Unlock()
	level := p.Level
	for _, other := range s.g.snapshotSessions() {
		other.mu.Lock()
		if l := other.logLevel; l != "" && logRank(l) < logRank(level) {
			level = l
		}
		other.mu.Unlock()
	}
	out := mustJSON(map[string]string{"level": level})
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, base := range s.g.live().upstreams {
		u, ok := s.servingNoStart(base)
		if !ok {
			continue // an isolated server's instance gets the level when it starts
		}
		if _, ok := u.capability("logging"); !ok || u.isModern() {
			continue // a modern server gets the level with each request
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := u.call(ctx, methodSetLevel, out); err != nil && !errors.Is(err, context.Canceled) {
				s.g.log.Warn("logging/setLevel failed upstream", "server", u.name, "err", err)
				return
			}
			mu.Lock()
			rec.Servers = append(rec.Servers, u.name)
			mu.Unlock()
		}()
	}
	wg.Wait()
	rec.Server = "*"
	return json.RawMessage("{}"), nil
}

func logRank(level string) int {
	for i, l := range logLevels {
		if l == level {
			return i
		}
	}
	return -1
}

func (s *session) wantsLog(level string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logLevel == "" || logRank(level) >= logRank(s.logLevel)
}

// logToClient sends the client a log message of mcpgate's own about the
// request ctx serves, if it wants the level: a legacy session by its
// logging/setLevel, a modern request by its envelope (on the request's
// own stream, and only if it asked).
func (s *session) logToClient(ctx context.Context, level, text string) {
	params := mustJSON(map[string]any{"level": level, "logger": "mcpgate", "data": text})
	req, _ := requestFrom(ctx)
	if req.env != nil {
		if req.env.wantsLog(level) {
			s.notifyRelated(notifyMessage, params, req.id)
		}
		return
	}
	if s.wantsLog(level) {
		s.notify(notifyMessage, params)
	}
}

// relayLog passes an upstream's log message to every client that wants its
// level, with the server named in logger.
func (g *Gateway) relayLog(u *upstream, params json.RawMessage) {
	var m struct {
		Level  string `json:"level"`
		Logger string `json:"logger"`
	}
	ms, err := rawjson.Members(params)
	if err != nil || json.Unmarshal(params, &m) != nil {
		u.log.Warn("skipped malformed notifications/message from upstream")
		return
	}
	logger := u.name
	if m.Logger != "" {
		logger += "/" + m.Logger
	}
	out := ms.Replace(params, "logger", quote(logger))
	for _, s := range u.audience() {
		if s.wantsLog(m.Level) {
			s.notify(notifyMessage, out)
		}
	}
	// A modern client gets log messages only for a request that asked for
	// them, on that request's stream: those of its requests in flight here.
	for _, c := range u.modernCallers() {
		if c.env.wantsLog(m.Level) {
			c.s.notifyRelated(notifyMessage, out, c.id)
		}
	}
}
