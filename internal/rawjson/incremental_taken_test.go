package rawjson

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// splitOnce asks SplitWithObjects for the arrays under keys, as the
// gateway's first list of each does: from then on, scans split them.
func splitOnce(t testing.TB, keys ...string) {
	t.Helper()
	for _, key := range keys {
		if _, _, err := SplitWithObjects([]byte(`{"`+key+`":[]}`), key); err != nil {
			t.Fatalf("SplitWithObjects of an empty %q: %v", key, err)
		}
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
	// A key no other test asks for: nobody has taken its arrays yet (nor
	// has this test, run before: it leaves the keys as it found them).
	const key = "takenOnlyHere"
	keys := takenKeys.Load()
	t.Cleanup(func() { takenKeys.Store(keys) })
	listAnswer := []byte(`{"jsonrpc":"2.0","id":1,"result":{"` + key + `":` + array + `}}`)
	if _, list, _, ok := objectsOfScan(listAnswer, []byte{200, 255, 13}); !ok || list != nil {
		t.Fatalf("an array under %q was split (ok %v) before anybody took such a split", key, ok)
	}
	splitOnce(t, key)
	for _, c := range []struct {
		msg   string
		split bool
	}{
		{string(listAnswer), true},
		{`{"jsonrpc":"2.0","id":1,"result":{"content":` + array + `}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"x","params":{"` + key + `":` + array + `}}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{"content":` + array + `,"` + key + `":` + array + `}}`, true},
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
	emptyMemo(t)
	splitOnce(t, "tools")
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
		held += e.objects.size()
	}
	counted := memo.objectBytes
	memo.mu.Unlock()
	if held == 0 || held > memoMaxObjectBytes || held != counted {
		t.Errorf("%d lists scanned, none taken: the memo holds %d bytes of their splits (counted %d), want some, at most %d, counted right", len(alive), held, counted, memoMaxObjectBytes)
	}
	runtime.KeepAlive(alive)
}
