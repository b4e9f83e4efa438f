package corpus

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// Text returns the named corpus, about size bytes cut at a line end (at
// size, for "xs"): "xs" is the perf suite's big result (one byte
// repeated); "prose", "json", "logs", "csv" and "mixed" are this
// package's; "english" is the prose without its sentences in other
// languages (plain ASCII, dense with words a detector's rules start with,
// used as ordinary words); "code" is Go source. code is a directory of Go source for "code" (its tests
// left out: they plant what detectors find on purpose). Deterministic:
// the seed is the name's.
func Text(name string, size int, code string) (string, error) {
	var b strings.Builder
	r := rand.New(rand.NewPCG(13, uint64(len(name))))
	for b.Len() < size {
		switch name {
		case "xs":
			return strings.Repeat("x", size), nil
		case "prose":
			Prose(&b, r)
		case "english":
			var p strings.Builder
			Prose(&p, r)
			for _, sentence := range strings.SplitAfter(p.String(), ". ") {
				if isASCII(sentence) {
					b.WriteString(sentence)
				}
			}
		case "code":
			src, err := goSource(code)
			if err != nil {
				return "", err
			}
			b.WriteString(src)
		case "json":
			JSONRecords(&b, r)
		case "logs":
			Logs(&b, r)
		case "csv":
			CSV(&b, r)
		case "mixed":
			return Mixed(size), nil
		default:
			return "", fmt.Errorf("no corpus %q", name)
		}
	}
	text := b.String()[:size]
	if i := strings.LastIndexByte(text, '\n'); i > size/2 {
		text = text[:i+1]
	}
	return text, nil
}

// goSource is the Go files of dir but its tests, in name order.
func goSource(dir string) (string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		return "", fmt.Errorf("no Go source in %s for the code corpus: %v", dir, err)
	}
	slices.Sort(files)
	var b strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		b.Write(data)
	}
	return b.String(), nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
