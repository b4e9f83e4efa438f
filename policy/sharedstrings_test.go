package policy

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestBigResultDecodedOnce: the default set's text scans, deciding on a big
// result side by side, decode its strings once between them: a result of
// 1 MiB of text with a line break every line (an escape each) allocates
// less than one and a half times its size per Run. Each scan decoding it
// into a buffer of its own allocated twice its size.
func TestBigResultDecodedOnce(t *testing.T) {
	chain := defaultDetectorSet(t)
	text := strings.Repeat("2025-03-14T09:12:44.123Z INFO  http: GET /api/v1/items status=200 latency=12ms\n", (1<<20)/80)
	in := toolCall(Result, toolResult(text))
	ctx := context.Background()
	chain.Run(ctx, in) // the detectors built, their scratch grown
	const runs = 5
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		if _, records, deny := chain.Run(ctx, in); deny != nil || len(records) != 0 {
			t.Fatalf("ordinary logs: records %v, denied %v", records, deny)
		}
	}
	runtime.ReadMemStats(&after)
	perRun := (after.TotalAlloc - before.TotalAlloc) / runs
	if limit := uint64(len(in.Message)) * 3 / 2; perRun > limit {
		t.Errorf("a Run of the default set on a %d-byte result allocated %d bytes, more than %d: its strings decoded more than once?", len(in.Message), perRun, limit)
	}
}

// TestSharedStringsBoundedByTheMessage: a result of tiny strings (a peer's
// to send: `"",` is three bytes) costs the shared decoding no more than a
// small multiple of its size. A record of each string (32 bytes), grown a
// quarter at a time, made a 2 MiB result allocate 137 MB. (The
// decoding alone is measured: under the race detector, sync.Pool drops
// what the detectors put back.)
func TestSharedStringsBoundedByTheMessage(t *testing.T) {
	tiny := strings.Repeat(`"",`, (2<<20)/3)
	msg := []byte(`{"content":[{"type":"text","text":"ok"}],"structuredContent":{"rows":[` + tiny + `""]}}`)
	const runs = 3
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		ss := &sharedStrings{msg: msg}
		ss.of(msg)
	}
	runtime.ReadMemStats(&after)
	perRun := (after.TotalAlloc - before.TotalAlloc) / runs
	if limit := uint64(len(msg)) * 3; perRun > limit {
		t.Errorf("the shared decoding of a %d-byte result of empty strings allocated %d bytes, more than %d", len(msg), perRun, limit)
	}
	// Past the bound each scan reads the strings itself: the default set
	// still decides on such a result.
	if _, records, deny := defaultDetectorSet(t).Run(context.Background(), toolCall(Result, string(msg))); deny != nil || len(records) != 0 {
		t.Fatalf("empty strings: records %v, denied %v", records, deny)
	}
}

// FuzzSharedStrings: the strings decoded once give what appendJSONStrings
// gives: the same rewritten message, the same error, and (when there is
// none) the same strings visited.
func FuzzSharedStrings(f *testing.F) {
	f.Add(`{"content":[{"type":"text","text":"a\nb \"key\" \u00e9\ud800 k"}],"k\n":"plain k"}`)
	f.Add(`{"a":"\q"}`)
	f.Add(`["k", "\u0041k\t", {"n\"k": ["x", "y\\k"]}, "unterminated`)
	f.Add("[\"\xff\xfek\", \"ok\"]")
	// Escaped member names between values, strings after an error, the
	// decoded buffer outgrown by invalid UTF-8 then more strings.
	f.Add(`{"a\u006b":"v\n","k":{"\"k":"\u00e9k"},"z":["\ud83d\ude00k","\ud83dk"]}`)
	f.Add(`{"a":"ok\tk","b":"bad\x","c":"k"}`)
	f.Add("[\"\\n\xff\xff\xff\xff\xff\xff\", \"k\\n\", \"\\u006b\"]")
	f.Add(`{"k":1,"kk":true,"kkk":null,"s":"k","n":[-1.5e3,"k\\"]}`)
	f.Fuzz(func(t *testing.T, msg string) {
		run := func(shared bool) (visited []string, out string, err error) {
			var repl string
			visit := func(s string, _ bool) bool {
				visited = append(visited, strings.Clone(s))
				repl = strings.ReplaceAll(s, "k", "[K]")
				return repl != s
			}
			write := func(dst []byte) []byte { return appendJSONString(dst, repl) }
			var b []byte
			if shared {
				ss := &sharedStrings{msg: []byte(msg)}
				if ss.of(ss.msg) != nil {
					b, err = ss.appendStrings(visit, write)
				} else { // too many strings to share (maxSharedStrings): read as a scan would
					b, err = appendJSONStrings([]byte(msg), false, visit, write)
				}
			} else {
				b, err = appendJSONStrings([]byte(msg), false, visit, write)
			}
			return visited, string(b), err
		}
		wantVisited, want, wantErr := run(false)
		gotVisited, got, gotErr := run(true)
		if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || wantErr == nil && !slices.Equal(gotVisited, wantVisited) {
			t.Fatalf("%q: shared gave %q, %v (visited %q); appendJSONStrings %q, %v (visited %q)", msg, got, gotErr, gotVisited, want, wantErr, wantVisited)
		}
	})
}
