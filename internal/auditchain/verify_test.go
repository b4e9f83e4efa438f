package auditchain

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// writeSeries writes n records through a Writer with opts, and returns the
// files it wrote, oldest first (rotated files sort by name before the
// active one).
func writeSeries(t *testing.T, n int, opts Options) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	opts.Sync = SyncNone
	w, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if res := w.Append(fmt.Appendf(nil, `{"n":%d,"pad":"%s"}`, i, strings.Repeat("x", i%7))); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return seriesFiles(t, path)
}

func seriesFiles(t *testing.T, path string) []string {
	t.Helper()
	rotated, err := filepath.Glob(strings.TrimSuffix(path, ".jsonl") + ".*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(rotated)
	return append(rotated, path)
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.SplitAfter(string(b), "\n")
}

func writeLines(t *testing.T, path string, lines []string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
}

// wantProblem checks that Verify finds the problem at file:line, with a
// message that says what.
func wantProblem(t *testing.T, files []string, file string, line int, says string) {
	t.Helper()
	rep, err := Verify(files)
	var p *Problem
	if !errors.As(err, &p) {
		t.Fatalf("Verify = %+v, %v; want a problem at %s:%d", rep, err, filepath.Base(file), line)
	}
	if p.File != file || p.Line != line || !strings.Contains(p.Msg, says) {
		t.Errorf("problem = %v\nwant at %s:%d, saying %q", p, file, line, says)
	}
}

func TestVerifyIntactSeriesInAnyOrder(t *testing.T) {
	files := writeSeries(t, 60, Options{MaxBytes: 1024})
	if len(files) < 3 {
		t.Fatalf("%d files; want a series of at least 3", len(files))
	}
	want := 60 + len(files) // each file has a header
	for range 5 {
		shuffled := slices.Clone(files)
		rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		rep, err := Verify(shuffled)
		if err != nil {
			t.Fatalf("Verify(%q): %v", shuffled, err)
		}
		if rep.Records != want || len(rep.Files) != len(files) || len(rep.Notes) != 0 {
			t.Fatalf("report = %+v; want %d records in %d files, no notes", rep, want, len(files))
		}
		for i, f := range rep.Files {
			if f.Name != files[i] {
				t.Errorf("file %d in chain order is %s, want %s", i, f.Name, files[i])
			}
		}
		if !rep.Files[0].Genesis {
			t.Errorf("the first file does not start the chain: %+v", rep.Files[0])
		}
	}

	// The later files alone verify too (older ones deleted), saying what
	// came before.
	rep, err := Verify(files[1:])
	if err != nil {
		t.Fatal(err)
	}
	if rep.Files[0].Genesis || rep.Files[0].Continues != filepath.Base(files[0]) {
		t.Errorf("first file = %+v; want it to name %s as the file before it", rep.Files[0], filepath.Base(files[0]))
	}
}

func TestVerifyFindsTampering(t *testing.T) {
	files := writeSeries(t, 8, Options{})
	path := files[0]
	orig := readLines(t, path) // header, 8 records, "" after the last newline

	t.Run("edited line", func(t *testing.T) {
		lines := slices.Clone(orig)
		lines[3] = strings.Replace(lines[3], `"n":2`, `"n":9`, 1)
		writeLines(t, path, lines)
		wantProblem(t, files, path, 5, "its prev is not the hash of line 4 (line 4 was changed")
	})
	t.Run("edited line made invalid", func(t *testing.T) {
		lines := slices.Clone(orig)
		lines[3] = strings.Replace(lines[3], `}`, ``, 1)
		writeLines(t, path, lines)
		wantProblem(t, files, path, 4, "not what a cut write of line 5 would leave")
	})
	t.Run("deleted line", func(t *testing.T) {
		lines := slices.Delete(slices.Clone(orig), 4, 5)
		writeLines(t, path, lines)
		wantProblem(t, files, path, 5, "its prev is not the hash of line 4")
	})
	t.Run("reordered pair", func(t *testing.T) {
		lines := slices.Clone(orig)
		lines[4], lines[5] = lines[5], lines[4]
		writeLines(t, path, lines)
		wantProblem(t, files, path, 5, "its prev is not the hash of line 4")
	})
	t.Run("inserted line", func(t *testing.T) {
		lines := slices.Insert(slices.Clone(orig), 4, `{"n":"forged"}`+"\n")
		writeLines(t, path, lines)
		wantProblem(t, files, path, 5, `a record without "prev" first`)
	})
	t.Run("inserted empty line", func(t *testing.T) {
		lines := slices.Insert(slices.Clone(orig), 4, "\n")
		writeLines(t, path, lines)
		wantProblem(t, files, path, 5, "empty line")
	})
	t.Run("header removed", func(t *testing.T) {
		writeLines(t, path, orig[1:])
		wantProblem(t, files, path, 1, "the file's first record is not its header")
	})
	t.Run("truncated last line", func(t *testing.T) {
		lines := slices.Clone(orig)
		last := len(lines) - 2
		lines[last] = lines[last][:40]
		writeLines(t, path, lines)
		rep, err := Verify(files)
		if err != nil {
			t.Fatalf("Verify: %v; want the chain to hold up to the cut line", err)
		}
		if rep.Records != 8 || len(rep.Notes) != 1 || rep.Notes[0].Line != 9 || !strings.Contains(rep.Notes[0].Msg, "the last line is cut short") {
			t.Errorf("report = %+v; want 8 records and a note that line 9 is cut short", rep)
		}
	})
}

func TestVerifyFindsMissingFiles(t *testing.T) {
	files := writeSeries(t, 60, Options{MaxBytes: 1024})
	if len(files) < 4 {
		t.Fatalf("%d files; want at least 4", len(files))
	}
	t.Run("middle file missing", func(t *testing.T) {
		given := slices.Delete(slices.Clone(files), 1, 2)
		wantProblem(t, given, files[2], 1, "names "+filepath.Base(files[1])+" as the file before it: that file is missing")
	})
	t.Run("lines removed from the end of a file", func(t *testing.T) {
		lines := readLines(t, files[1])
		defer writeLines(t, files[1], lines)
		writeLines(t, files[1], lines[:len(lines)-2])
		wantProblem(t, files, files[2], 1, "or lines were removed from the end of "+files[1])
	})
	t.Run("a file given twice", func(t *testing.T) {
		if _, err := Verify([]string{files[0], files[0]}); err == nil || !strings.Contains(err.Error(), "given twice") {
			t.Errorf("Verify = %v, want an error", err)
		}
	})
	t.Run("a copy of a file", func(t *testing.T) {
		cp := filepath.Join(filepath.Dir(files[1]), "copy.jsonl")
		b, _ := os.ReadFile(files[1])
		os.WriteFile(cp, b, 0o600)
		defer os.Remove(cp)
		_, err := Verify(append(slices.Clone(files), cp))
		var p *Problem
		if !errors.As(err, &p) || !strings.Contains(p.Msg, "two chains fork there") {
			t.Errorf("Verify = %v, want a fork", err)
		}
	})
}

// TestVerifyEveryByte: changing any byte of any line but the last breaks
// the chain, or ends it before the change (a last line cut short: a
// note). Nothing changed is ever verified. (The end of a chain is
// protected by nothing after it: see Report.LastHash.)
func TestVerifyEveryByte(t *testing.T) {
	files := writeSeries(t, 3, Options{})
	orig, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	lastStart := bytes.LastIndexByte(orig[:len(orig)-1], '\n') + 1
	for i := range lastStart {
		b := bytes.Clone(orig)
		b[i] ^= 0x01
		if b[i] == '\n' || orig[i] == '\n' {
			b[i] = orig[i] ^ 0x20 // keep the line structure; still a change
		}
		s, err := scan("f", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if s.problem != nil {
			continue
		}
		lines := strings.SplitAfter(string(orig), "\n")
		if s.records >= len(lines)-2 || s.last != Hash([]byte(strings.TrimSuffix(lines[s.records-1], "\n"))) || len(s.trailing) == 0 {
			t.Fatalf("byte %d changed (%q → %q), and the chain still holds with %d records", i, orig[i], b[i], s.records)
		}
	}
}

// TestVerifyCutWrites: the lines a cut write leaves are skipped, and the
// chain holds over them; a cut write at the end of a rotated file belongs
// to the next file's header.
func TestVerifyCutWrites(t *testing.T) {
	var disk cutWriter
	disk.cuts = map[int]int{2: 30, 3: 0, 5: 5, 8: -1} // write 2 cut after 30 bytes, …; 8: all but the newline
	w := NewStream(&disk, Options{})
	for i := range 10 {
		w.Append(fmt.Appendf(nil, `{"n":%d}`, i))
	}
	path := filepath.Join(t.TempDir(), "a.jsonl")
	os.WriteFile(path, disk.buf.Bytes(), 0o600)
	rep, err := Verify([]string{path})
	if err != nil {
		t.Fatalf("Verify: %v\n%s", err, disk.buf.String())
	}
	// header + 10 records, less the two cut (write 3 wrote nothing at all,
	// and is lost too); the one cut before its newline is whole.
	if rep.Records != 8 || len(rep.Notes) != 2 {
		t.Errorf("report = %+v; want 8 records, 2 cut lines noted\n%s", rep, disk.buf.String())
	}
}

// cutWriter is a disk that fills up: write i (from 0, the header) gets
// cuts[i] bytes through, or all but the last with -1.
type cutWriter struct {
	buf  bytes.Buffer
	n    int
	cuts map[int]int
}

func (c *cutWriter) Write(p []byte) (int, error) {
	n, ok := c.cuts[c.n]
	c.n++
	if !ok {
		return c.buf.Write(p)
	}
	if n < 0 {
		n = len(p) - 1
	}
	c.buf.Write(p[:n])
	return n, errors.New("no space left on device")
}

func FuzzVerify(f *testing.F) {
	var disk cutWriter
	w := NewStream(&disk, Options{Host: "h"})
	w.now = func() time.Time { return time.Unix(0, 0) }
	for i := range 3 {
		w.Append(fmt.Appendf(nil, `{"n":%d}`, i))
	}
	f.Add(disk.buf.Bytes())
	f.Add([]byte("{\"prev\":\"00\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := scan("f", bytes.NewReader(data))
		if err != nil {
			return
		}
		if _, err := orderFiles([]*fileScan{s}); err == nil && s.problem == nil && s.records > 0 && s.header.Event != HeaderEvent {
			t.Fatalf("a chain without a header verifies:\n%s", data)
		}
	})
}

func TestLink(t *testing.T) {
	h := Hash([]byte("x"))
	for _, tc := range []struct{ record, want string }{
		{`{"a":1}`, `{"prev":"` + h + `","a":1}`},
		{`{}`, `{"prev":"` + h + `"}`},
	} {
		line := Link(h, []byte(tc.record))
		if string(line) != tc.want {
			t.Errorf("Link(%s) = %s, want %s", tc.record, line, tc.want)
		}
		if prev, ok := Prev(line); !ok || prev != h {
			t.Errorf("Prev(%s) = %q, %v", line, prev, ok)
		}
	}
	if _, ok := Prev([]byte(`{"prev":"` + strings.ToUpper(h) + `"}`)); ok {
		t.Error("Prev accepts upper-case hex, which mcpgate never writes")
	}
}

func TestRotatedName(t *testing.T) {
	at := time.Date(2026, 11, 26, 1, 19, 33, 698_000_000, time.UTC)
	for path, want := range map[string]string{
		"mcpgate-audit.jsonl":      "mcpgate-audit.2026-11-26T01-19-33.698Z.jsonl",
		"/var/log/audit":           "/var/log/audit.2026-11-26T01-19-33.698Z",
		"dir.d/.jsonl":             "dir.d/.jsonl.2026-11-26T01-19-33.698Z",
		"logs/mcpgate.audit.jsonl": "logs/mcpgate.audit.2026-11-26T01-19-33.698Z.jsonl",
	} {
		if got := RotatedName(path, at); got != want {
			t.Errorf("RotatedName(%q) = %q, want %q", path, got, want)
		}
	}
}
