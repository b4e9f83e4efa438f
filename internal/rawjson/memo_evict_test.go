package rawjson

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// The byte bound on the splits of arrays the memo holds drops splits of
// arrays, not entries: an entry without one (a big result's members) costs
// the bound nothing, and dropping it made a later reader scan the whole
// message again.
func TestMemoByteBoundKeepsEntriesWithoutObjects(t *testing.T) {
	emptyMemo(t)
	var alive [][]byte
	add := func(objects *memoObjects) []byte {
		v := make([]byte, memoMin)
		alive = append(alive, v)
		remember(v, memoEntry{size: len(v), members: []memoMember{{key: "k", start: 1, end: 2}}, objects: objects})
		return v
	}
	var plain [][]byte
	for range memoMax / 2 {
		plain = append(plain, add(nil))
	}
	// Each split a third of the bound: the third one is past it, and
	// so are all after it.
	third := memoMaxObjectBytes / 3 / int(unsafe.Sizeof(elemSpan{}))
	for range 8 {
		add(&memoObjects{key: "tools", elems: make([]elemSpan, third)})
	}
	for n, v := range plain {
		if _, ok := recall(v); !ok {
			t.Fatalf("entry %d of %d, which held no split array, was dropped to make room for splits", n, len(plain))
		}
	}
	memo.mu.Lock()
	held, objectBytes, entries := 0, memo.objectBytes, len(memo.entries)
	for _, e := range memo.entries {
		held += e.objects.size()
	}
	memo.mu.Unlock()
	if held != objectBytes || held > memoMaxObjectBytes || entries > memoMax {
		t.Errorf("memo: %d entries, splits of %d bytes (%d counted), want at most %d entries and %d bytes, counted right", entries, held, objectBytes, memoMax, memoMaxObjectBytes)
	}
	runtime.KeepAlive(alive)
}

// emptyMemo empties the memo for t, and again once it is done: entries
// that other tests left (their messages alive until the next collection)
// would be evicted at random to make room, a test's own among them.
func emptyMemo(t *testing.T) {
	empty := func() {
		memo.mu.Lock()
		memo.entries, memo.objectBytes = nil, 0
		memo.mu.Unlock()
	}
	empty()
	t.Cleanup(empty)
}

// TestMemoKeepsTheMessageAtWork: a table full of messages still alive
// makes room by dropping the one remembered longest ago, never the one
// being worked on: Finish remembers a message, then its result, and the
// random eviction it replaced dropped the message's own entry about one
// time in 32, which the reader then scanned again whole.
func TestMemoKeepsTheMessageAtWork(t *testing.T) {
	emptyMemo(t)
	var alive [][]byte
	for range memoMax {
		v := make([]byte, memoMin)
		alive = append(alive, v)
		remember(v, memoEntry{size: len(v)})
	}
	text := strings.Repeat("x", memoMin)
	// 400 rounds all right leave random eviction a chance of (31/32)^400,
	// about 3e-6.
	for round := range 400 {
		msg := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`)
		alive = append(alive, msg)
		var s Incremental
		s.Reset()
		if !s.Finish(msg) {
			t.Fatal("Finish: false for a valid message")
		}
		if _, ok := recall(msg); !ok {
			t.Fatalf("round %d: the message just scanned was dropped from the memo to make room for its own result", round)
		}
		ms, err := Members(msg)
		if err != nil {
			t.Fatal(err)
		}
		if res, _ := ms.Get("result"); !NoURIKey(res) {
			t.Fatalf("round %d: the result just scanned is not remembered", round)
		}
	}
	runtime.KeepAlive(alive)
}
