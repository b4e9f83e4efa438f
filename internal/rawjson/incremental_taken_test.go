package rawjson

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// The gateway asks for the lists' arrays: so do these tests, as its first
// list would.
func init() {
	for _, key := range []string{"tools", "prompts", "resources", "resourceTemplates"} {
		takeArraysOf(key)
	}
}

// A scan splits only the arrays someone takes the split of: a list
// result's, under a key SplitWithObjects was asked for. A tool's result
// (its "content") and a request's params are not split: their splits
// stayed in the memo, up to 16,384 members each, until evicted.
func TestScanSplitsOnlyWhatIsTaken(t *testing.T) {
	items := make([]string, 600)
	for i := range items {
		items[i] = fmt.Sprintf(`{"type":"text","text":"item %d of a long answer, padded out to make the line long"}`, i)
	}
	array := "[" + strings.Join(items, ",") + "]"
	for _, c := range []struct {
		msg   string
		split bool
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{"tools":` + array + `}}`, true},
		{`{"jsonrpc":"2.0","id":1,"result":{"content":` + array + `}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"x","params":{"tools":` + array + `}}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{"content":` + array + `,"tools":` + array + `}}`, true},
	} {
		_, list, _, ok := objectsOfScan([]byte(c.msg), []byte{200, 255, 13})
		if !ok || (list != nil) != c.split {
			t.Errorf("%.60s…: split %v, want %v", c.msg, list != nil, c.split)
		}
	}
}

// The lists split by scans and not taken yet are bounded in bytes, however
// many there are: 32 lists of 8,000 items, all alive and none taken, were
// 22 MB of offsets in the memo.
func TestUntakenSplitsBounded(t *testing.T) {
	items := make([]string, 8000)
	for i := range items {
		items[i] = fmt.Sprintf(`{"name":"t%d","x":1}`, i)
	}
	var alive [][]byte
	for n := range memoMax {
		msg := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"tools":[%s]}}`, n, strings.Join(items, ",")))
		var s Incremental
		s.Reset()
		s.Feed(msg[:len(msg)/2])
		if !s.Finish(msg) {
			t.Fatal("Finish: not valid")
		}
		alive = append(alive, msg)
	}
	held := 0
	memo.mu.Lock()
	for _, e := range memo.entries {
		if o := e.objects; o != nil {
			held += len(o.elems)*int(unsafe.Sizeof(elemSpan{})) + len(o.members)*int(unsafe.Sizeof(span{}))
		}
	}
	memo.mu.Unlock()
	if held == 0 || held > memoMaxObjectBytes {
		t.Errorf("%d lists scanned, none taken: the memo holds %d bytes of their splits, want some and at most %d", len(alive), held, memoMaxObjectBytes)
	}
	runtime.KeepAlive(alive)
}
