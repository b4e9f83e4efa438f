package proxy

import (
	"bytes"
	"container/list"
	"encoding/json"
	"sync"

	"github.com/mcpgate/mcpgate/internal/rawjson"
)

// What one upstream's memory of returned URIs may hold. A URI is charged
// its length plus uriEntryOverhead, roughly what its map entry and list
// element cost, so that maxRememberedBytes bounds memory, not only text.
const (
	maxRememberedURIs  = 1024
	maxRememberedBytes = 256 << 10
	maxRememberedURI   = 8 << 10 // a longer URI is not remembered
	uriEntryOverhead   = 128
)

// uriMemory remembers the URIs one upstream returned in results (a tool's
// resource_link, an embedded resource, a resources/read content), so that a
// client reading such a URI back unprefixed reaches the server that gave it
// out, though the server never listed it. It forgets the least recently
// used first. Each upstream has its own, so that a server returning floods
// of links can only push out its own.
type uriMemory struct {
	mu    sync.Mutex
	order list.List                // of string; front: most recently used
	index map[string]*list.Element // guarded by mu, like order and bytes
	bytes int
}

func newURIMemory() *uriMemory {
	return &uriMemory{index: map[string]*list.Element{}}
}

func (m *uriMemory) add(uri string) {
	if uri == "" || len(uri) > maxRememberedURI {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.index[uri]; ok {
		m.order.MoveToFront(e)
		return
	}
	m.index[uri] = m.order.PushFront(uri)
	m.bytes += len(uri) + uriEntryOverhead
	for m.order.Len() > maxRememberedURIs || m.bytes > maxRememberedBytes {
		old := m.order.Remove(m.order.Back()).(string)
		delete(m.index, old)
		m.bytes -= len(old) + uriEntryOverhead
	}
}

// has reports whether uri is remembered, and counts the question as a use.
func (m *uriMemory) has(uri string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.index[uri]
	if ok {
		m.order.MoveToFront(e)
	}
	return ok
}

// returnedURIs finds the URIs a result of method carries where a client
// would read them back: tools/call content blocks, prompts/get message
// contents, resources/read contents. The result comes from a message the
// connection validated. Anything it cannot read is skipped.
func returnedURIs(method string, res json.RawMessage) []string {
	if rawjson.NoURIKey(res) || !bytes.Contains(res, []byte(`"uri"`)) {
		return nil // no URI at all: the usual tool result, settled at once (a big one by the scan that validated it)
	}
	ms, err := rawjson.SplitValid(res)
	if err != nil {
		return nil
	}
	var uris []string
	switch method {
	case methodToolsCall:
		for _, block := range arrayMember(ms, "content") {
			uris = appendBlockURI(uris, block)
		}
	case methodPromptsGet:
		for _, msg := range arrayMember(ms, "messages") {
			if mm, err := rawjson.SplitValid(msg); err == nil {
				if block, ok := mm.Get("content"); ok {
					uris = appendBlockURI(uris, block)
				}
			}
		}
	case methodResourcesRead:
		for _, c := range arrayMember(ms, "contents") {
			uris = appendURIMember(uris, c)
		}
	}
	return uris
}

// appendBlockURI adds the URI of a content block: a resource_link's own, or
// an embedded resource's.
func appendBlockURI(uris []string, block json.RawMessage) []string {
	bm, err := rawjson.SplitValid(block)
	if err != nil {
		return uris
	}
	var typ string
	if raw, ok := bm.Get("type"); !ok || json.Unmarshal(raw, &typ) != nil {
		return uris
	}
	switch typ {
	case "resource_link":
		return appendURIMember(uris, block)
	case "resource":
		if r, ok := bm.Get("resource"); ok {
			return appendURIMember(uris, r)
		}
	}
	return uris
}

// appendURIMember adds obj's "uri" member when it is a string.
func appendURIMember(uris []string, obj json.RawMessage) []string {
	om, err := rawjson.SplitValid(obj)
	if err != nil {
		return uris
	}
	var uri string
	// The length check spares decoding a huge string only to drop it; it
	// leaves room for escapes ("\/" is common).
	if raw, ok := om.Get("uri"); ok && len(raw) <= 2*maxRememberedURI && json.Unmarshal(raw, &uri) == nil && uri != "" {
		uris = append(uris, uri)
	}
	return uris
}

// arrayMember returns the elements of ms[key] when it is an array.
func arrayMember(ms rawjson.MemberList, key string) []json.RawMessage {
	raw, ok := ms.Get(key)
	if !ok {
		return nil
	}
	elems, err := rawjson.ElementsValid(raw)
	if err != nil {
		return nil
	}
	return elems
}
