package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// The client's handshake, which the gateway answers itself.

// initialize answers the client's handshake. The gateway is the server here:
// it does not forward the client's initialize to anyone.
func (s *session) initialize(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	req, _ := requestFrom(ctx)
	done, err := s.beginInitialize(req.id)
	if err != nil {
		return nil, err
	}
	defer s.endInitialize(done)
	var p struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		ClientInfo      implementation             `json:"clientInfo"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.ProtocolVersion == "" {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "initialize needs params with a protocolVersion")
	}
	version := negotiateVersion(p.ProtocolVersion)

	if err := s.g.awaitStartup(ctx); err != nil {
		return nil, err
	}
	res := map[string]any{
		"protocolVersion": version,
		"capabilities":    s.g.capabilities(),
		"serverInfo":      map[string]string{"name": "mcpgate", "version": s.g.version},
	}
	if instr := s.g.instructions(); instr != "" {
		res["instructions"] = instr
	}
	s.mu.Lock()
	s.initialized, s.protocol, s.clientInfo, s.clientCaps = true, version, p.ClientInfo, p.Capabilities
	s.mu.Unlock()
	return mustJSON(res), nil
}

// awaitStartup waits (bounded) for the upstreams' first connection
// attempts, so that their capabilities and instructions can be in the
// answer to a client's opening request.
func (g *Gateway) awaitStartup(ctx context.Context) error {
	select {
	case <-g.warm:
		return nil // the usual case, on every modern request: no timer made
	default:
	}
	select {
	case <-g.warm:
	case <-time.After(g.startupWait):
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// beginInitialize claims the session's handshake for request id (received
// may have claimed it already, when it read the request).
func (s *session) beginInitialize(id jsonrpc.ID) (chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.initialized:
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidRequest, "the session is already initialized")
	case s.initializing != nil && s.initRequest != id:
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidRequest, "initialize is already under way on this session")
	case s.initializing == nil: // not seen by received (in a batch)
		s.initializing, s.initRequest = make(chan struct{}), id
	}
	return s.initializing, nil
}

// endInitialize ends the handshake, answered or failed, and lets the
// requests waiting for it go on.
func (s *session) endInitialize(done chan struct{}) {
	s.mu.Lock()
	s.initializing = nil
	if s.initialized && s.readyPending {
		s.markReadyLocked()
	}
	s.mu.Unlock()
	close(done)
}

// capabilities are the union of what the connected upstreams offer. The
// lists are also offered while any upstream is not connected yet (or failed
// and may come back): capabilities cannot change after initialize, and a
// list that is offered and empty is better than a server whose tools can
// never appear. Every offered list may change as upstreams come and go, so
// listChanged is always true.
func (g *Gateway) capabilities() map[string]any {
	caps := map[string]any{}
	offer := func(name string) {
		switch name {
		case "tools", "prompts", "resources":
			caps[name] = map[string]bool{"listChanged": true}
		case "logging", "completions":
			caps[name] = map[string]any{}
		}
	}
	for _, u := range g.live().upstreams {
		init, ok := u.knownInit()
		if !ok {
			offer("tools")
			offer("prompts")
			offer("resources")
			if init, ok = g.discovery.startingInit(u); !ok {
				continue
			}
		}
		for _, name := range []string{"tools", "prompts", "resources", "logging", "completions"} {
			if _, ok := init.Capabilities[name]; ok {
				offer(name)
			}
		}
		if subscribable(init.Capabilities["resources"]) {
			caps["resources"] = map[string]bool{"listChanged": true, "subscribe": true}
		}
	}
	return caps
}

// knownInit is the initialize answer a configured server gave: the live
// one; for an isolated server, the last answer of any of its instances (an
// isolated server not started yet offers what a server not connected yet
// does: the lists).
func (u *upstream) knownInit() (initializeResult, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.isolatedBase() {
		return u.lastInit, u.hadInit
	}
	return u.init, u.state == stateConnected
}

// instructions combine every connected upstream's instructions under its name.
func (g *Gateway) instructions() string {
	var parts []string
	for _, u := range g.live().upstreams {
		init, connected := u.knownInit()
		if !connected {
			init, connected = g.discovery.startingInit(u)
		}
		instr := strings.TrimSpace(init.Instructions)
		if connected && instr != "" {
			parts = append(parts, fmt.Sprintf("## %s\n%s", u.name, instr))
		}
	}
	return strings.Join(parts, "\n\n")
}
