package rawjson

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/corpus"
)

// stringRestReference is stringRest as it was before its loop took
// escapes itself (issue 13, big results full of escapes): a plainRun and
// an escapeEnd call for every escape. Kept to pin the fast one.
func stringRestReference(b []byte, i int) (end int, more, escaped bool) {
	for {
		if i = plainRun(b, i); i >= len(b) {
			return i, true, escaped
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, false, escaped
		case c == '\\':
			escaped = true
			next, cut := escapeEnd(b, i)
			if next < 0 {
				return -1, false, true
			}
			if cut {
				return i, true, true
			}
			i = next
		case c < 0x20:
			return -1, false, escaped
		default:
			i++
		}
	}
}

// scanStringReference is scanString as it was, on stringRestReference.
func scanStringReference(b []byte, i int) (end int, escaped bool) {
	end, more, escaped := stringRestReference(b, i+1)
	if end < 0 || more {
		return -1, false
	}
	return end, escaped
}

var stringRestSeeds = []string{
	`abc"`, `\"`, `\\\\"`, `a\nb\tc\/d\be\ff\rg"`, `\u00e9\u20AC"`, `\u00g9"`, `\u12"`, `\`, `\u`, `\u1`, `\u123`,
	`\q"`, "a\x01\"", "\xff\xfe\"", `é€😀"`, `0123456789abcdef0123456789\"abcdef"`,
	strings.Repeat(`{\"id\":12,\"name\":\"a tool\",\"ok\":true}, `, 40) + `"`,
	strings.Repeat("x", 5000) + `\n` + strings.Repeat("y", 300) + `"`,
	strings.Repeat(`\n`, 50) + "\x1f",
}

// FuzzStringRest: stringRest and scanString, from anywhere in any bytes,
// say what their references say.
func FuzzStringRest(f *testing.F) {
	for _, s := range stringRestSeeds {
		for _, from := range []uint8{0, 1, 3} {
			f.Add([]byte(s), from)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, from uint8) {
		i := min(int(from), len(b))
		end, more, escaped := stringRest(b, i)
		wantEnd, wantMore, wantEscaped := stringRestReference(b, i)
		if end != wantEnd || more != wantMore || end >= 0 && escaped != wantEscaped {
			t.Fatalf("stringRest(%q, %d) = %d, %v, %v; reference %d, %v, %v", b, i, end, more, escaped, wantEnd, wantMore, wantEscaped)
		}
		if i < len(b) {
			end, escaped := scanString(b, i)
			wantEnd, wantEscaped := scanStringReference(b, i)
			if end != wantEnd || escaped != wantEscaped {
				t.Fatalf("scanString(%q, %d) = %d, %v; reference %d, %v", b, i, end, escaped, wantEnd, wantEscaped)
			}
		}
	})
}

// TestStringRestEveryEscape: every byte after a backslash, at every place
// in a word, with and without what follows.
func TestStringRestEveryEscape(t *testing.T) {
	for v := range 256 {
		for at := range 12 {
			for _, tail := range []string{`"`, `0aF9"`, `0a`, ``, `zzzz"`} {
				b := []byte(strings.Repeat("a", at) + `\` + string(rune(0)) + tail)
				b[at+1] = byte(v)
				end, more, escaped := stringRest(b, 0)
				wantEnd, wantMore, wantEscaped := stringRestReference(b, 0)
				if end != wantEnd || more != wantMore || end >= 0 && escaped != wantEscaped {
					t.Fatalf("stringRest(%q) = %d, %v, %v; reference %d, %v, %v", b, end, more, escaped, wantEnd, wantMore, wantEscaped)
				}
			}
		}
	}
}

// BenchmarkStringRestMixed: the text of perf's 50MiB-mixed result (JSON
// records, logs and prose, a backslash every dozen bytes once escaped),
// at 4 MiB.
func BenchmarkStringRestMixed(b *testing.B) {
	s, _ := json.Marshal(corpus.Mixed(4 << 20))
	s = s[1:]
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if end, more, _ := stringRest(s, 0); end != len(s) || more {
			b.Fatal(end, more)
		}
	}
}

// BenchmarkStringRestMixedReference: the same with the reference, to
// compare.
func BenchmarkStringRestMixedReference(b *testing.B) {
	s, _ := json.Marshal(corpus.Mixed(4 << 20))
	s = s[1:]
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if end, more, _ := stringRestReference(s, 0); end != len(s) || more {
			b.Fatal(end, more)
		}
	}
}
