package rawjson

import "weak"

// Forget drops what the memo remembers of v: its caller knows that nobody
// will split it (its bytes are those of a message already split), and an
// array of objects split by the scan would be kept until evicted.
func Forget(v []byte) {
	if len(v) < memoMin {
		return
	}
	key := weak.Make(&v[0])
	memo.mu.Lock()
	if e, ok := memo.entries[key]; ok {
		forget(key, e)
	}
	memo.mu.Unlock()
}
