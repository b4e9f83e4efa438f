package auditchain

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// Problem is where a chain breaks: the first line that does not verify.
type Problem struct {
	File string
	Line int // 1-based; 0: the file as a whole
	Msg  string
}

func (p *Problem) Error() string {
	if p.Line == 0 {
		return p.File + ": " + p.Msg
	}
	return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
}

// Note is something Verify found that is not tampering: a line a cut write
// left (a crash, a full disk), an empty file.
type Note struct {
	File string
	Line int // 0: the file as a whole
	Msg  string
}

func (n Note) String() string {
	if n.Line == 0 {
		return n.File + ": " + n.Msg
	}
	return fmt.Sprintf("%s:%d: %s", n.File, n.Line, n.Msg)
}

// Report is what Verify found in a chain that holds.
type Report struct {
	Files    []FileReport // in the order of the chain
	Records  int          // whole lines verified, headers included
	LastHash string       // the hash of the last record: keep it elsewhere to anchor the end
	Notes    []Note
}

// FileReport is one file of a verified chain.
type FileReport struct {
	Name    string
	Records int
	// Continues names the file the chain came from when it is not among
	// those given (older files deleted, or not asked for); empty when the
	// file starts the chain (Genesis) or the header does not say.
	Continues string
	Genesis   bool // the file's header starts the chain: nothing came before it
}

// maxLine bounds one line: a record with bodies holds two messages.
const maxLine = 256 << 20

// Verify checks that the files hold one unbroken chain. They may be given
// in any order: each file's header links to the last line of the one
// before it, which puts them in order. It returns the first line that
// does not verify, in chain order, as a *Problem; other errors are I/O.
//
// What no chain can show: the end. Lines removed from the end of the last
// file, or its last line changed, leave a shorter chain that holds; keep
// Report.LastHash elsewhere to tell. A last line cut short is reported as
// a Note, as a crash leaves it.
func Verify(paths []string) (*Report, error) {
	if len(paths) == 0 {
		return nil, errors.New("no files to verify")
	}
	var scans []*fileScan
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			return nil, fmt.Errorf("%s: given twice", p)
		}
		seen[p] = true
		s, err := scanFile(p)
		if err != nil {
			return nil, err
		}
		scans = append(scans, s)
	}
	rep := &Report{}
	var chainFiles []*fileScan
	for _, s := range scans {
		if s.records == 0 {
			msg := "empty: no record in it"
			if s.problem != nil {
				return nil, s.problem
			}
			if len(s.fragments) > 0 {
				msg = "no whole record in it, only what cut writes left"
			}
			rep.Notes = append(rep.Notes, Note{File: s.name, Msg: msg})
			continue
		}
		chainFiles = append(chainFiles, s)
	}
	order, err := orderFiles(chainFiles)
	if err != nil {
		return nil, err
	}
	for i, s := range order {
		if s.problem != nil {
			return nil, s.problem
		}
		// Fragments at a file's end belong to the line that comes next:
		// the next file's header.
		if i+1 < len(order) {
			next := order[i+1]
			for _, f := range s.trailing {
				if !isFragmentOf(f.start, next.firstPrev) {
					return nil, &Problem{File: s.name, Line: f.line, Msg: "not a record, and not what a cut write of the next line (the header of " + next.name + ") would leave: a line was changed"}
				}
				rep.Notes = append(rep.Notes, Note{File: s.name, Line: f.line, Msg: cutMsg})
			}
		} else {
			for _, f := range s.trailing {
				rep.Notes = append(rep.Notes, Note{File: s.name, Line: f.line, Msg: "the last line is cut short (mcpgate was killed, or the disk was full, while writing it): not a record"})
			}
		}
		rep.Notes = append(rep.Notes, s.notes...)
		fr := FileReport{Name: s.name, Records: s.records}
		if i == 0 {
			fr.Genesis = s.firstPrev == Genesis
			if !fr.Genesis {
				fr.Continues = s.header.PreviousFile
			}
		}
		rep.Files = append(rep.Files, fr)
		rep.Records += s.records
		rep.LastHash = s.last
	}
	return rep, nil
}

const cutMsg = "a record cut short (mcpgate was killed, or the disk was full, while writing it): not a record; the chain goes on over it"

// orderFiles puts files in chain order by their links. Files that do not
// link up make a Problem at the first file after the gap.
func orderFiles(files []*fileScan) ([]*fileScan, error) {
	byFirst := map[string]*fileScan{}
	for _, f := range files {
		if other, taken := byFirst[f.firstPrev]; taken {
			a, b := other, f
			if b.name < a.name {
				a, b = b, a
			}
			return nil, &Problem{File: b.name, Line: 1, Msg: fmt.Sprintf("continues the same record as %s does: two chains fork there (a copy of a file, or a file written by two writers that did not take turns)", a.name)}
		}
		byFirst[f.firstPrev] = f
	}
	next := map[*fileScan]*fileScan{}
	hasPrev := map[*fileScan]bool{}
	for _, p := range files {
		if f, ok := byFirst[p.last]; ok && f != p {
			next[p], hasPrev[f] = f, true
		}
	}
	// Each start begins a run of linked files; more than one run means a
	// file or lines are missing between them.
	var runs [][]*fileScan
	placed := 0
	for _, f := range files {
		if hasPrev[f] {
			continue
		}
		var run []*fileScan
		for g := f; g != nil; g = next[g] {
			run = append(run, g)
		}
		placed += len(run)
		runs = append(runs, run)
	}
	if placed != len(files) {
		return nil, errors.New("the files link to each other in a loop: they cannot all be audit chains")
	}
	slices.SortStableFunc(runs, func(a, b []*fileScan) int { return a[0].header.Time.Compare(b[0].header.Time) })
	var order []*fileScan
	for i, run := range runs {
		if i > 0 {
			// The problems in the files before the gap come first.
			for _, f := range order {
				if f.problem != nil {
					return order, nil
				}
			}
			first := run[0]
			msg := fmt.Sprintf("its header continues a record (hash %s) that no file given ends with", first.firstPrev)
			if first.header.PreviousFile != "" {
				msg += fmt.Sprintf("; it names %s as the file before it", first.header.PreviousFile)
			}
			prev := order[len(order)-1]
			return nil, &Problem{File: first.name, Line: 1, Msg: msg + fmt.Sprintf(": that file is missing, or lines were removed from the end of %s", prev.name)}
		}
		order = append(order, run...)
	}
	return order, nil
}

// fileScan is what one file holds, read once.
type fileScan struct {
	name      string
	header    Header // its first record, if a header
	firstPrev string // the first record's prev: where the file links on to
	last      string // the hash of its last whole record
	records   int
	problem   *Problem // the first line that does not verify
	notes     []Note
	fragments []fragment // every line a cut write left
	trailing  []fragment // those after the last whole record
}

type fragment struct {
	line  int
	start []byte // enough of its start to check its prev
}

func scanFile(path string) (*fileScan, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return scan(path, f)
}

func scan(path string, r io.Reader) (*fileScan, error) {
	s := &fileScan{name: path}
	br := bufio.NewReaderSize(r, 64<<10)
	lastLine := 0 // the line of the last whole record
	var pending []fragment
	for n := 1; ; n++ {
		line, err := readLine(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if len(line) == 0 {
			s.fail(n, "empty line: mcpgate never writes one, so the file was changed")
			continue
		}
		prev, chained := Prev(line)
		if !json.Valid(line) {
			if !looksLikeFragment(line) {
				s.fail(n, "not a record: neither JSON nor what a cut write leaves, so the line was changed")
				continue
			}
			fr := fragment{line: n, start: bytes.Clone(line[:min(len(line), len(prevOpen)+hashLen+1)])}
			pending = append(pending, fr)
			s.fragments = append(s.fragments, fr)
			continue
		}
		if !chained {
			s.fail(n, `a record without "prev" first: not written by mcpgate's chain, or changed`)
			continue
		}
		for _, fr := range pending {
			if isFragmentOf(fr.start, prev) {
				s.notes = append(s.notes, Note{File: path, Line: fr.line, Msg: cutMsg})
			} else {
				s.fail(fr.line, fmt.Sprintf("not a record, and not what a cut write of line %d would leave: a line was changed", n))
			}
		}
		pending = nil
		switch {
		case s.records == 0:
			s.firstPrev = prev
			if h, ok := parseHeader(line); ok {
				s.header = h
			} else {
				s.fail(n, "the file's first record is not its header: lines before it were removed")
			}
		case prev != s.last:
			s.fail(n, fmt.Sprintf("the chain breaks: its prev is not the hash of line %d (line %d was changed, or lines after it were removed or moved)", lastLine, lastLine))
		}
		s.last, lastLine = Hash(line), n
		s.records++
	}
	s.trailing = pending
	return s, nil
}

// fail records the first problem. Reading goes on: the file's last line
// still says how it links to the next file.
func (s *fileScan) fail(line int, msg string) {
	if s.problem == nil {
		s.problem = &Problem{File: s.name, Line: line, Msg: msg}
	}
}

// readLine returns the next line without its newline; io.EOF after the
// last. The last line may lack its newline.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, fmt.Errorf("a line longer than %d MiB: not an audit record", maxLine>>20)
		}
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(line) > 0:
			return line, nil
		default:
			return nil, err
		}
	}
}
