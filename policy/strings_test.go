package policy

import (
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/detect"
)

// values returns the string values rewriteStrings visits in msg.
func values(t testing.TB, msg string) []string {
	t.Helper()
	var got []string
	out, err := rewriteStrings([]byte(msg), func(s string) (string, bool) {
		got = append(got, strings.Clone(s))
		return "", false
	})
	if err != nil {
		t.Fatalf("rewriteStrings(%s): %v", msg, err)
	}
	if string(out) != msg {
		t.Fatalf("nothing replaced, yet the output differs:\n got %s\nwant %s", out, msg)
	}
	return got
}

func TestRewriteStringsVisitsValuesNotNames(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want []string
	}{
		{`"top"`, []string{"top"}},
		{`{"a":"x","b" : "y","c":1,"d":null,"e":true}`, []string{"x", "y"}},
		{`{"content":[{"type":"text","text":"hello"}],"structuredContent":{"k":["v1",{"n":"v2"}]},"isError":false}`,
			[]string{"text", "hello", "v1", "v2"}},
		{"{\n  \"a\" \t:\r\n \"b\"\n}", []string{"b"}},
		{`[[[]],{},"",[""]]`, []string{"", ""}},
		{`{"esc":"a\"b\\c\/d\b\f\n\r\t"}`, []string{"a\"b\\c/d\b\f\n\r\t"}},
		{`{"u":"\u0041\u00e9\u20ac"}`, []string{"Aé€"}},
		{`{"pair":"\ud83d\ude00","lone":"\ud83dx","low":"\ude00","twohigh":"\ud83d\ud83d"}`, []string{"😀", "\ufffdx", "\ufffd", "\ufffd\ufffd"}},
		{`{"k\"ey":"v","\u006b":"w"}`, []string{"v", "w"}},
		{"{\"bad\":\"a\xffb\"}", []string{"a\ufffdb"}},
		{`{"n":-1.5e3,"s":"after number"}`, []string{"after number"}},
	} {
		if got := values(t, tc.msg); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: visited %q, want %q", tc.msg, got, tc.want)
		}
	}
}

func TestRewriteStringsReplacesOnlyWhatChanged(t *testing.T) {
	msg := `{"content": [ {"type":"text", "text": "key AKIA here"} ], "note":"caf\u00e9", "n": 1}`
	out, err := rewriteStrings([]byte(msg), func(s string) (string, bool) {
		switch s {
		case "key AKIA here":
			return "key [REDACTED:aws_access_key] here", true
		case "café":
			return "café", true // the same string: the escape is kept as written
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"content": [ {"type":"text", "text": "key [REDACTED:aws_access_key] here"} ], "note":"caf\u00e9", "n": 1}`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
}

func TestRewriteStringsEscapesReplacements(t *testing.T) {
	repl := "quote\" backslash\\ nl\n tab\t ctl\x01 sep\u2028 bad\xff é"
	out, err := rewriteStrings([]byte(`["x"]`), func(string) (string, bool) { return repl, true })
	if err != nil {
		t.Fatal(err)
	}
	want := `["quote\" backslash\\ nl\n tab\t ctl\u0001 sep\u2028 bad\ufffd é"]`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	var back []string
	if err := json.Unmarshal(out, &back); err != nil || back[0] != strings.ToValidUTF8(repl, "\ufffd") {
		t.Errorf("decodes to %q, %v", back, err)
	}
}

func TestRewriteStringsNoChangeReturnsTheInput(t *testing.T) {
	msg := []byte(toolResult4K())
	out, err := rewriteStrings(msg, func(string) (string, bool) { return "", false })
	if err != nil || &out[0] != &msg[0] || len(out) != len(msg) {
		t.Errorf("nothing replaced, yet the input slice was not returned as is (%v)", err)
	}
}

func TestRewriteStringsErrors(t *testing.T) {
	for _, msg := range []string{`{"a":"hunter2`, `["hunter2\`, `["hunter2 \x"]`, `["hunter2 \u12"]`, `["hunter2 \u12G4"]`} {
		_, err := rewriteStrings([]byte(msg), func(string) (string, bool) { return "", false })
		if err == nil {
			t.Errorf("%s: no error", msg)
		} else if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error %q repeats the text", msg, err)
		}
	}
}

// TestRewriteStringsLarge: a long string full of escapes, and deep nesting,
// are walked (and quickly: the scan is linear).
func TestRewriteStringsLarge(t *testing.T) {
	body := strings.Repeat(`ab\"\\\n\u00e9`, 200_000)
	msg := `{"big":"` + body + `","deep":` + strings.Repeat("[", 10000) + `"x"` + strings.Repeat("]", 10000) + `}`
	var want string
	if err := json.Unmarshal([]byte(`"`+body+`"`), &want); err != nil {
		t.Fatal(err)
	}
	got := values(t, msg)
	if len(got) != 2 || got[0] != want || got[1] != "x" {
		t.Errorf("visited %d strings, first right: %v", len(got), len(got) > 0 && got[0] == want)
	}
}

// FuzzRewriteStrings checks, on any valid JSON: replacing every string by
// itself gives the input back byte for byte; replacing each by another
// gives valid JSON that decodes to the input's value with exactly those
// strings changed; the strings visited are the ones encoding/json reads.
func FuzzRewriteStrings(f *testing.F) {
	for _, seed := range []string{
		`{"a":"b"}`, `["x",1,null,{"k":["v"]}]`, `"\ud83d\ude00 \ud83d \u00e9\n"`,
		`{"content":[{"type":"text","text":"a\"b"}],"structuredContent":{"a b":{"c":"d"}}}`,
		"[\"a\xffb\", \"\\u2028\"]", ` { "x" : [ "y" , "z" ] } `, `{"":""}`, toolResult4K(),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		if !json.Valid([]byte(msg)) {
			return
		}
		same, err := rewriteStrings([]byte(msg), func(s string) (string, bool) { return s, true })
		if err != nil {
			t.Fatalf("valid JSON %q: %v", msg, err)
		}
		if string(same) != msg {
			t.Fatalf("identity replacement changed %q into %q", msg, same)
		}

		var visited []string
		changed, err := rewriteStrings([]byte(msg), func(s string) (string, bool) {
			visited = append(visited, strings.Clone(s))
			return mangle(s), true
		})
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(changed) {
			t.Fatalf("%q became invalid JSON %q", msg, changed)
		}
		var want []string
		wantTokens := jsonTokens(t, msg)
		for i, tk := range wantTokens {
			if s, ok := tk.v.(string); ok && !tk.name {
				want = append(want, s)
				wantTokens[i].v = mangle(s)
			}
		}
		if !reflect.DeepEqual(visited, want) {
			t.Fatalf("%q: visited %q, encoding/json reads %q", msg, visited, want)
		}
		if got := jsonTokens(t, string(changed)); !reflect.DeepEqual(got, wantTokens) {
			t.Fatalf("%q became %q: reads as %v, want %v", msg, changed, got, wantTokens)
		}
	})
}

func mangle(s string) string { return "<" + s + "\"\\\u2028\x01>" }

// token is one token of a JSON text as encoding/json reads it; name marks
// a member name.
type token struct {
	v    any
	name bool
}

func jsonTokens(t *testing.T, msg string) []token {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(msg))
	dec.UseNumber()
	var out []token
	var open []json.Delim
	expectName := false
	valueDone := func() {
		expectName = len(open) > 0 && open[len(open)-1] == '{'
	}
	for {
		tk, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("read %q: %v", msg, err)
		}
		name := expectName
		switch tk {
		case json.Delim('{'), json.Delim('['):
			open = append(open, tk.(json.Delim))
			expectName = tk == json.Delim('{')
		case json.Delim('}'), json.Delim(']'):
			open = open[:len(open)-1]
			valueDone()
		default:
			if name {
				expectName = false
			} else {
				valueDone()
			}
		}
		out = append(out, token{tk, name})
	}
}

// TestNextSpecial checks the eight-bytes-at-a-time search against a plain
// loop, with special bytes at every position and bytes next to them that a
// careless bit trick would take for them (0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x00).
func TestNextSpecial(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	fill := []byte{'a', 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x00, 0x01, ' '}
	special := []byte{'"', '\\', 0x80, 0xc3, 0xff}
	for range 20000 {
		n := r.IntN(40)
		if r.IntN(8) == 0 {
			n = r.IntN(12 << 10) // past longRun and across windows
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = fill[r.IntN(len(fill))]
		}
		for range r.IntN(3) {
			if len(b) > 0 {
				b[r.IntN(len(b))] = special[r.IntN(len(special))]
			}
		}
		from := 0
		if len(b) > 0 {
			from = r.IntN(len(b) + 1)
		}
		want := len(b)
		for i := from; i < len(b); i++ {
			if b[i] == '"' || b[i] == '\\' || b[i] >= 0x80 {
				want = i
				break
			}
		}
		if got := nextSpecial(b, from); got != want {
			t.Fatalf("nextSpecial(%q, %d) = %d, want %d", b, from, got, want)
		}
	}
}

// TestAppendRedactedIsRedactThenQuote: writing a redacted string piece by
// piece gives the bytes that quoting the whole redacted string gives,
// findings cutting runes, invalid UTF-8 and characters to escape included.
func TestAppendRedactedIsRedactThenQuote(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	pieces := []string{"a", "Z", "\"", "\\", "\n", "\x01", "é", "€", "\U0001F600", "\u2028", "\xff", "\xe2\x82", "<", "&"}
	recordOnly := map[string]bool{"high_entropy_string": true}
	kinds := []string{"aws_access_key", "email", "high_entropy_string"}
	for range 20000 {
		var b strings.Builder
		for range r.IntN(20) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		var found []detect.Finding
		for at := 0; at < len(s); {
			start := at + r.IntN(len(s)-at+1)
			if start >= len(s) {
				break
			}
			end := start + 1 + r.IntN(len(s)-start)
			found = append(found, detect.Finding{Kind: kinds[r.IntN(len(kinds))], Start: start, End: end})
			at = end
		}
		want := appendJSONString(nil, redact(s, found, recordOnly))
		if got := appendRedacted(nil, s, found, recordOnly); string(got) != string(want) {
			t.Fatalf("%q with %v: appendRedacted %s, quoted redact %s", s, found, got, want)
		}
	}
}

// TestFirstNonASCII: the 64-bytes-a-step search finds a high byte at every
// position of every length around its step, and the first of two.
func TestFirstNonASCII(t *testing.T) {
	for n := range 200 {
		b := []byte(strings.Repeat("\x7f", n))
		if got := firstNonASCII(b); got != n {
			t.Fatalf("firstNonASCII of %d plain bytes = %d, want %d", n, got, n)
		}
		for i := range n {
			b[i] = 0x80
			if n-1 > i {
				b[n-1] = 0xff
			}
			if got := firstNonASCII(b); got != i {
				t.Fatalf("firstNonASCII of %d bytes, the first high at %d: got %d", n, i, got)
			}
			b[i], b[n-1] = 0x7f, 0x7f
		}
	}
}
