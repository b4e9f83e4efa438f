package proxy

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// With "page_size" set, each merged list is served in pages. A cursor names
// a snapshot of the merged list and an offset in it, so that paging through
// a list never mixes two versions of it. Snapshots are kept for the most
// recent lists only; a cursor into one that is gone gets -32602 and the
// client lists again from the start.

const maxSnapshots = 64

type snapshot struct {
	k     kind
	items []json.RawMessage // exposed items, in order
	hint  cacheHint         // how long the list may be reused, from made
	made  time.Time
}

// snapshotStore is guarded by Gateway.mu.
type snapshotStore struct {
	next  uint64
	byID  map[uint64]*snapshot
	order []uint64 // oldest first
}

func (st *snapshotStore) add(sn *snapshot) uint64 {
	if st.byID == nil {
		st.byID = map[uint64]*snapshot{}
	}
	st.next++
	st.byID[st.next] = sn
	st.order = append(st.order, st.next)
	if len(st.order) > maxSnapshots {
		delete(st.byID, st.order[0])
		st.order = st.order[1:]
	}
	return st.next
}

const cursorVersion = "v1"

// encodeCursor makes an opaque cursor for offset in snapshot id.
func encodeCursor(id uint64, offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("%s:%d:%d", cursorVersion, id, offset)))
}

// decodeCursor reads a cursor made by encodeCursor.
func decodeCursor(c string) (id uint64, offset int, err error) {
	if len(c) > 64 {
		return 0, 0, errors.New("too long")
	}
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, 0, errors.New("not a cursor mcpgate made")
	}
	parts := strings.Split(string(raw), ":")
	if len(parts) != 3 || parts[0] != cursorVersion {
		return 0, 0, errors.New("not a cursor mcpgate made")
	}
	id, err1 := strconv.ParseUint(parts[1], 10, 64)
	off, err2 := strconv.ParseUint(parts[2], 10, 31)
	if err1 != nil || err2 != nil {
		return 0, 0, errors.New("not a cursor mcpgate made")
	}
	return id, int(off), nil
}

// pagedList serves one page of a merged list: from a new snapshot when the
// client gives no cursor, else from the snapshot its cursor names.
//
// It also returns how long the page may be reused: every page of one
// snapshot has its scope, and what is left of its life.
func (s *session) pagedList(results []listResult, k kind, cursor *string) (json.RawMessage, cacheHint, error) {
	g := s.g
	var sn *snapshot
	var id uint64
	offset := 0
	if cursor == nil {
		sn = &snapshot{k: k, items: g.mergeItems(k, results), hint: mergedHint(results), made: time.Now()}
		g.mu.Lock()
		id = g.snapshots.add(sn)
		g.mu.Unlock()
	} else {
		var err error
		if id, offset, err = decodeCursor(*cursor); err != nil {
			return nil, cacheHint{}, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "invalid cursor %q: %v", *cursor, err)
		}
		g.mu.Lock()
		sn = g.snapshots.byID[id]
		g.mu.Unlock()
		if sn == nil || sn.k != k || offset > len(sn.items) {
			return nil, cacheHint{}, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "cursor %q has expired: list again without a cursor", *cursor)
		}
	}
	end := min(offset+g.live().cfg.PageSize, len(sn.items))
	out := []byte{'{'}
	out = append(out, quote(kinds[k].key)...)
	out = append(out, ":["...)
	for i, it := range sn.items[offset:end] {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, it...)
	}
	out = append(out, ']')
	if end < len(sn.items) {
		out = append(out, `,"nextCursor":`...)
		out = append(out, quote(encodeCursor(id, end))...)
	}
	hint := sn.hint
	hint.ttl = max(0, hint.ttl-time.Since(sn.made))
	return append(out, '}'), hint, nil
}

// mergeItems is merge for paging: the exposed items one by one.
func (g *Gateway) mergeItems(k kind, results []listResult) []json.RawMessage {
	nt := g.live().names
	view, _ := nt.exposedNames(k)
	n := 0
	for _, r := range results {
		n += len(r.items)
	}
	items := make([]json.RawMessage, 0, n)
	for _, r := range results {
		if r.err != nil {
			continue
		}
		for i, it := range r.items {
			exposed := nt.exposedAs(k, view, r.up, i, it.name)
			if exposed == it.name {
				items = append(items, it.raw)
			} else {
				items = append(items, appendExposed(make([]byte, 0, len(it.raw)+len(exposed)), it, kinds[k].nameKey, exposed))
			}
		}
	}
	return items
}
