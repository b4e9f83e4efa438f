package rawjson

import (
	"runtime"
	"strconv"
	"testing"
)

// A message of many members, once gone, leaves little behind: neither the
// scanner a line reader keeps between lines nor the memo holds a record
// per member of it. Both did, 32 bytes and a key each: a 2 MiB result of
// 200,000 small members left some 14 MB in memory, and every one of the
// memo's 32 entries could be such.
func TestManyMembersLeaveLittle(t *testing.T) {
	var s Incremental
	s.Reset()
	const members = 200_000
	before := heapAfterGC()
	scanManyMembers(&s, members)
	s.Reset()
	retained := int64(heapAfterGC()) - int64(before)
	if retained > 1<<20 {
		t.Fatalf("%d bytes retained after a message of %d members was scanned and dropped, want at most 1 MiB", retained, members)
	}
	runtime.KeepAlive(&s)
}

// scanManyMembers scans, as a line reader does, a response whose result
// has n members, and drops it.
func scanManyMembers(s *Incremental, n int) {
	msg := []byte(`{"jsonrpc":"2.0","id":1,"result":{`)
	for i := range n {
		if i > 0 {
			msg = append(msg, ',')
		}
		msg = append(msg, `"k`...)
		msg = strconv.AppendInt(msg, int64(i), 10)
		msg = append(msg, `":0`...)
	}
	msg = append(msg, "}}"...)
	s.Feed(msg[:len(msg)/2])
	if !s.Finish(msg) {
		panic("Finish: false for a valid message")
	}
}

func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
