package proxy

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadStderrLines(t *testing.T) {
	long := strings.Repeat("x", maxStderrLine)
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"lines", "one\ntwo\n", []string{"one", "two"}},
		{"last line without newline", "one\ntwo", []string{"one", "two"}},
		{"crlf and empty lines", "one\r\n\n\ntwo\r\n", []string{"one", "two"}},
		{"progress bar", "\r 10%\r 50%\r100%\ndone\n", []string{" 10%", " 50%", "100%", "done"}},
		{"exactly the limit", long + "\nnext\n", []string{long, "next"}},
		{"over the limit: cut, rest skipped to the line end", long + "yyyy\nnext\n", []string{long + "…", "next"}},
		{"over the limit at the end", long + "yyyy", []string{long + "…"}},
		{"over the limit, ended by \\r", long + "yyyy\rnext", []string{long + "…", "next"}},
		{"cut inside a rune", long[:maxStderrLine-1] + "é and more\n", []string{long[:maxStderrLine-1] + "…"}},
		{"rune fits", long[:maxStderrLine-2] + "é and more\n", []string{long[:maxStderrLine-2] + "é…"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			readers := map[string]io.Reader{
				"whole":              strings.NewReader(tt.in),
				"one byte at a time": iotest.OneByteReader(strings.NewReader(tt.in)),
			}
			for how, r := range readers {
				var got []string
				readStderrLines(r, nil, func(line string) { got = append(got, line) })
				if !slices.Equal(got, tt.want) {
					t.Errorf("%s: got %q, want %q", how, abbreviate(got), abbreviate(tt.want))
				}
			}
		})
	}
}

func abbreviate(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) > 20 {
			l = fmt.Sprintf("%s…(%d bytes)…%s", l[:10], len(l), l[len(l)-10:])
		}
		out[i] = l
	}
	return out
}

// Only what is kept of a cut line goes through redactCut, before the "…":
// that is where a secret may be cut in two.
func TestReadStderrLinesRedactsCut(t *testing.T) {
	long := strings.Repeat("x", maxStderrLine-4)
	hideTok := func(s string) string { return strings.TrimSuffix(s, "tok/") + "${TOKEN}" }
	var got []string
	readStderrLines(strings.NewReader("short tok/\n"+long+"tok/en<1> and more\n"), hideTok, func(line string) { got = append(got, line) })
	if want := []string{"short tok/", long + "${TOKEN}…"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", abbreviate(got), abbreviate(want))
	}
}
