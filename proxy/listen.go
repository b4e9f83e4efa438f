package proxy

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// subscriptions/listen is how a modern client hears of changes: one long
// request whose answer stream carries the notifications it asked for, each
// tagged with the request's id. The gateway acknowledges with what it will
// send, then delivers its own merged list_changed (the same ones legacy
// sessions get) and the updates of the resources named, for which it
// subscribes upstream as it does for legacy sessions. The listen ends when
// the client cancels it (no answer then), or with an empty result when the
// client's connection is draining (mcpgate stopping, the client leaving).

// maxListeners bounds the listen requests open at once, over all clients:
// each holds a stream and, per resource, a subscription. One client may
// hold at most its share (clientShareOf).
const maxListeners = 1024

// listenFilter is what a listen asks for, and what the acknowledgement
// says will be sent.
type listenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// listener is one open listen request.
type listener struct {
	s      *session
	holder string // the client it counts against (session.holder)
	id     jsonrpc.ID
	ctx    context.Context // the listen request's: cancelled (by the client) it hears nothing more
	tag    json.RawMessage // the subscription id, as JSON: the request's id
	lists  [numKinds]bool  // the lists whose changes it wants (templates go with resources)

	mu      sync.Mutex
	acked   bool           // the acknowledgement went: notifications may follow
	pending [numKinds]bool // list changes that came before it did
}

func (s *session) listen(ctx context.Context, params json.RawMessage, rec *auditRecord) (json.RawMessage, error) {
	req, _ := requestFrom(ctx)
	var p struct {
		Notifications *listenFilter `json:"notifications"`
	}
	if json.Unmarshal(params, &p) != nil || p.Notifications == nil {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "params.notifications is required: the notification types to listen for")
	}
	want := p.Notifications
	if len(want.ResourceSubscriptions) > maxSubscriptions {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "params.notifications.resourceSubscriptions names %d resources; mcpgate keeps at most %d per listen", len(want.ResourceSubscriptions), maxSubscriptions)
	}
	l := &listener{s: s, holder: s.holder(), id: req.id, ctx: ctx, tag: json.RawMessage(req.id.String())}
	// The gateway's lists may always change (servers come and go), so it
	// honours every list it was asked about.
	honored := listenFilter{ToolsListChanged: want.ToolsListChanged, PromptsListChanged: want.PromptsListChanged, ResourcesListChanged: want.ResourcesListChanged}
	l.lists[kindTools] = want.ToolsListChanged
	l.lists[kindPrompts] = want.PromptsListChanged
	l.lists[kindResources] = want.ResourcesListChanged
	l.lists[kindTemplates] = want.ResourcesListChanged

	s.g.mu.Lock()
	if err := s.g.roomForListen(l.holder); err != nil {
		s.g.mu.Unlock()
		return nil, err
	}
	s.g.addListener(l)
	s.g.mu.Unlock()
	defer func() {
		s.g.mu.Lock()
		s.g.removeListener(l)
		s.g.mu.Unlock()
		s.g.dropListenSubscriptions(l)
	}()

	for _, uri := range want.ResourceSubscriptions {
		if s.listenTo(ctx, l, uri) {
			honored.ResourceSubscriptions = append(honored.ResourceSubscriptions, uri)
		}
	}
	// Routed: its subscriptions move with their servers at a reload (or
	// end with them), and nothing else of it goes to a server.
	letGoOfServers(ctx)
	rec.Server = "mcpgate"
	s.notifyRelated(notifyAcknowledged, setMeta(mustJSON(map[string]any{"notifications": honored}), metaPair{metaSubscriptionID, l.tag}), l.id)
	l.ack()

	end := setMeta(json.RawMessage("{}"), metaPair{metaSubscriptionID, l.tag})
	if !honored.ToolsListChanged && !honored.PromptsListChanged && !honored.ResourcesListChanged && len(honored.ResourceSubscriptions) == 0 {
		return end, nil // nothing can ever be sent on it
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err() // the client cancelled: it gets no answer
	case <-s.draining:
		return end, nil
	}
}

// roomForListen refuses a listen past the cap for all clients, or past
// the share of the client holder. g.mu held.
func (g *Gateway) roomForListen(holder string) error {
	if len(g.listeners) >= maxListeners {
		return jsonrpc.Errorf(jsonrpc.ErrInternal, "Subscription limit reached: mcpgate keeps at most %d listen requests open for all clients; retry later", maxListeners)
	}
	if held := g.listensOf[holder]; held >= clientShareOf(maxListeners) {
		return jsonrpc.Errorf(jsonrpc.ErrInternal, "Subscription limit reached: this client has %d listen requests open, the most mcpgate keeps for one client (of %d for all); cancel some, or listen for several things on one", held, maxListeners)
	}
	return nil
}

// listenTo subscribes l to one resource; false when it cannot be (no
// server owns the URI, or its server takes no subscriptions): the
// acknowledgement then leaves it out.
func (s *session) listenTo(ctx context.Context, l *listener, uri string) bool {
	params := mustJSON(map[string]string{"uri": uri})
	rt, _, params, err := s.routeParam(ctx, params, "uri", kindResources)
	if err == nil {
		err = s.watch(ctx, subscriber{s: s, listen: l}, rt, uri, params, &auditRecord{})
	}
	if err != nil {
		s.g.log.Debug("listen: resource not subscribed", "session", s.id, "uri", uri, "err", err)
		return false
	}
	return true
}

// ack marks the acknowledgement as sent, and sends what came before it.
func (l *listener) ack() {
	l.mu.Lock()
	l.acked = true
	pending := l.pending
	l.mu.Unlock()
	for k, p := range pending {
		if p {
			l.send(kinds[k].changed, nil)
		}
	}
}

// listChanged tells the listener that list k changed, if it asked.
func (l *listener) listChanged(k kind) {
	if !l.lists[k] {
		return
	}
	l.mu.Lock()
	if !l.acked {
		l.pending[k] = true
		l.mu.Unlock()
		return
	}
	l.mu.Unlock()
	l.send(kinds[k].changed, nil)
}

// send passes a notification on the listen's stream, tagged with its id.
func (l *listener) send(method string, params json.RawMessage) {
	if l.ctx.Err() != nil {
		return // cancelled: the client hears nothing more on it
	}
	l.s.notifyRelated(method, setMeta(params, metaPair{metaSubscriptionID, l.tag}), l.id)
}

// listenersOf are the listen requests that hear of a change of u's list
// k: those of its session that want k, for an isolated server's instance;
// else all that want k.
func (u *upstream) listenersOf(k kind) []*listener {
	u.g.mu.Lock()
	defer u.g.mu.Unlock()
	return u.g.listenersBy.hearing(u.owner, k)
}
