package policy

import (
	"fmt"
	"runtime/metrics"
	"strings"
	"testing"
	"unsafe"
)

// FuzzSplitDecoding: a string decoded in two halves (unescapeAt, at any
// split point) reads as it does decoded whole (unescape): the same text,
// end, error; invalid UTF-8 (which outgrows its room) included. And
// readString reads it as the loop it replaced (readStringReference), into
// a buffer with any room.
func FuzzSplitDecoding(f *testing.F) {
	f.Add(`{"t":"a\nb \"k\" \u00e9\ud83d\ude00 x\ud800 y/z\\\\"}`, 3, 0)
	f.Add("\"\xff\xfe\xe2\x82 ab\xf0cd\\n\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff ef\"", 7, 2)
	f.Add(`"abc\q def ghi jkl"`, 9, 0)
	f.Add(`"abc def ghi jkl\`, 5, 1)
	f.Add(`"ab" , "cd\n ef gh"`, 3, 0)
	// Split next to what an escape ends with: a one-byte escape, an
	// invalid \u escape, a surrogate followed by no \u, a backslash run.
	f.Add(`"x\nyz\tw\/v\rq"`, 3, 0)
	f.Add(`"ab\uZZZZ cd ef"`, 4, 0)
	f.Add(`"ab\ud83dxy\ude00zz\udc00 k"`, 8, 3)
	f.Add(`"\\\\n\\\"q r s"`, 5, 0)
	f.Add("\"a\xc3\xa9b\xe2\x82\xacc\xf0\x9f\x98\x80d\xe2\x82 e\\u00e9 f\"", 6, 1)
	f.Add("\"ctl\x01 in it\"", 3, 0)
	f.Add(`"ends before the split" , "second string \n"`, 30, 0)
	f.Add(`"ends\n before" , "the split in a second string"`, 20, 2)
	f.Fuzz(func(t *testing.T, msg string, at, prefix int) {
		w := stringWalk{msg: []byte(msg)}
		if !w.next() || !w.escaped() {
			return
		}
		readsAsReference(t, w.msg, w.open+1, abs(prefix)%8, abs(at)%(len(msg)+16))
		s := splitPoint(w.msg, w.open+1+abs(at)%(len(msg)-w.open), len(msg))
		if s < 0 {
			return
		}
		// As in the shared decoding: strings before it in the buffer, room
		// for the rest of the message.
		before := strings.Repeat("p", abs(prefix)%8)
		newDst := func() []byte { return append(make([]byte, 0, len(before)+len(msg)-w.open), before...) }
		whole := w
		want, wantErr := whole.unescape(newDst())
		split := w
		dst := newDst()
		got, gotErr := split.unescapeAt(dst, s)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("%q split at %d: error %v, whole %v", msg, s, gotErr, wantErr)
		}
		if wantErr != nil {
			return
		}
		if string(got) != string(want) || split.text != whole.text || split.end != whole.end || split.at != whole.at || split.name != whole.name {
			t.Fatalf("%q split at %d: %q (text %q, end %d), whole %q (text %q, end %d)", msg, s, got, split.text, split.end, want, whole.text, whole.end)
		}
		// The buffer keeps its room for what follows (a string ending
		// before s returned the first half's, cut at s).
		if unsafe.SliceData(got) == unsafe.SliceData(dst) && cap(got) != cap(dst) {
			t.Fatalf("%q split at %d: the buffer returned has room for %d bytes, the one given %d", msg, s, cap(got), cap(dst))
		}
	})
}

// readsAsReference checks that readString reads msg's string from p as
// readStringReference does, into a buffer holding prefix bytes with room
// for room more: the same end, text and error, and nothing written past
// its room (appendPlain stores whole words ahead of the text).
func readsAsReference(t *testing.T, msg []byte, p, prefix, room int) {
	t.Helper()
	const guard = 16
	buf := make([]byte, prefix+room+guard)
	for i := range buf {
		buf[i] = 0xa5
	}
	end, got, err := readString(msg, p, buf[:prefix:prefix+room])
	wantEnd, want, wantErr := readStringReference(msg, p, make([]byte, prefix, prefix+room))
	if fmt.Sprint(err) != fmt.Sprint(wantErr) || end != wantEnd {
		t.Fatalf("%q from %d: end %d, error %v; reference: end %d, error %v", msg, p, end, err, wantEnd, wantErr)
	}
	if err == nil && string(got[prefix:]) != string(want[prefix:]) {
		t.Fatalf("%q from %d: read %q, reference %q", msg, p, got[prefix:], want[prefix:])
	}
	for i, c := range buf[prefix+room:] {
		if c != 0xa5 {
			t.Fatalf("%q from %d into room for %d: byte %d past the room written", msg, p, room, i)
		}
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// TestSharedDecodingSplit: a result whose text of megabytes is decoded in
// two halves (a goroutine is started) reads, for the scans, as
// appendJSONStrings reads it.
func TestSharedDecodingSplit(t *testing.T) {
	for _, msg := range []string{
		toolResult(corpusText(t, "mixed", 3<<20)),
		toolResult(strings.Repeat("caf\u00e9 \"quoted\"\t\\ \u2028\n", (3<<20)/20)),
		// Invalid UTF-8 as a peer may send it (encoding/json would have
		// replaced it): decoded, the second half outgrows its room.
		`{"content":[{"type":"text","text":"` + strings.Repeat(`ok\n`, 1<<19) + "\xff\xfe bad" + strings.Repeat("\xff", 1<<20) + `"}]}`,
	} {
		msg := []byte(msg + `,{"after":"a\nb"}`)
		var want, got []string
		visit := func(into *[]string) func(string, bool) bool {
			return func(s string, _ bool) bool { *into = append(*into, strings.Clone(s)); return false }
		}
		if _, err := appendJSONStrings(msg, false, visit(&want), nil); err != nil {
			t.Fatal(err)
		}
		created := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
		metrics.Read(created)
		before := created[0].Value.Uint64()
		ss := &sharedStrings{msg: msg}
		if ss.of(msg) == nil {
			t.Fatal("not shared")
		}
		// The second half's goroutine: without it, nothing was split and
		// the test would pass with the split broken.
		if metrics.Read(created); created[0].Value.Uint64() == before {
			t.Fatal("the text of megabytes was not split")
		}
		if _, err := ss.appendStrings(visit(&got), nil); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d strings, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("string %d differs (%d bytes, want %d)", i, len(got[i]), len(want[i]))
			}
		}
	}
}
