package policy

import (
	"slices"
	"sort"
	"unsafe"

	"github.com/mcpgate/mcpgate/internal/detect"
)

// A big result is read from its server in pieces, and while the gateway
// waits for the next one its core is mostly idle; yet the text scans only
// started once the whole line was in, decoding its strings (the shared
// decoding: about a quarter of the policies' CPU on 10 MiB of JSON, logs
// and prose) and then scanning them, while the answer waited. A Prescan
// does that work as the pieces come: it decodes the strings as far as the
// line goes, and has the detectors that can scan a text while it arrives
// (detect.Streamer) scan them. Run then uses what it found for exactly
// the bytes it read, and for the policies it ran for; anything else is
// decided as before.

// Prescan is the work of a chain's text scans on one message at one
// stage, done while the line the message is in is read (see
// Chain.Prescan). Its methods are called by one goroutine, the reader's:
// Advance with each piece, then Finish or Stop. Once finished, it is
// given to Run in Input.Prescan, which only reads it.
type Prescan struct {
	line       []byte // the line so far; whole once finished
	walk       prescanWalk
	strings    []jsonString // the line's string values, in its offsets
	maxStrings int
	scans      []prescanScan
	found      []detect.Finding // a scan's scratch
	finished   bool
	failed     bool // Stop, a line the walk could not read, or too many strings
}

// prescanScan is one text scan's part of a prescan: its detector's
// findings in the line's strings.
type prescanScan struct {
	policy *textScan
	det    detect.Streamer
	stream detect.Stream // the scan of the string in progress, if started
	hits   []prescanHit
	finds  []detect.Finding
}

// prescanHit is a string with findings: strings[index] has finds[lo:hi].
type prescanHit struct{ index, lo, hi int }

// streamFrom is the length from which a string still arriving is scanned
// as it comes: a shorter one is scanned whole once complete.
const streamFrom = 32 << 10

// Prescan starts the work of the chain's text scans at stage on a message
// that arrives as a line of a stream (a big result being read): nil when
// no text scan acts at stage. The caller gives it each piece of the line
// (Advance), then the whole line (Finish), or Stop if the line will not be
// decided on as it was read; and gives it to Run, with the message it
// covers, in Input.Prescan.
func (c Chain) Prescan(stage Stage) *Prescan {
	var ps *Prescan
	for _, p := range c {
		t, ok := p.(*textScan)
		if !ok || !acts(p, stage) {
			continue
		}
		if ps == nil {
			ps = &Prescan{walk: newPrescanWalk()}
		}
		if s, ok := streamerOf(t.det); ok {
			ps.scans = append(ps.scans, prescanScan{policy: t, det: s})
		}
	}
	return ps
}

// streamerOf returns det as a Streamer, if it is one; a detector built on
// its first scan is built for it.
func streamerOf(det detect.Detector) (detect.Streamer, bool) {
	if b, ok := det.(builtOnFirstScan); ok {
		det = b()
	}
	s, ok := det.(detect.Streamer)
	return s, ok
}

// Advance reads the line so far: each call's line begins with the bytes of
// the previous one's, in the same memory.
func (ps *Prescan) Advance(line []byte) {
	if ps.failed || ps.finished {
		return
	}
	if ps.line == nil {
		// As the shared decoding bounds them, for the biggest line this
		// one can be.
		ps.maxStrings = maxSharedStrings(cap(line))
	}
	ps.line = line
	ps.walkTo(line, false)
	if w := &ps.walk; !ps.failed && w.open >= 0 && w.closed < 0 && len(w.text) >= streamFrom {
		for i := range ps.scans {
			sc := &ps.scans[i]
			if sc.stream == nil {
				sc.stream = sc.det.Stream()
			}
			sc.stream.Advance(w.text)
		}
	}
}

// Finish reads the rest of the line, which is now whole, and reports
// whether the prescan may be used.
func (ps *Prescan) Finish(line []byte) bool {
	if ps.failed || ps.finished {
		return false
	}
	if ps.line == nil {
		ps.maxStrings = maxSharedStrings(cap(line))
	}
	ps.line = line
	ps.walkTo(line, true)
	ps.stopStreams()
	ps.finished = true
	ps.found = nil
	return !ps.failed
}

// Stop ends a prescan that will not be used, and lets go of its memory.
func (ps *Prescan) Stop() {
	ps.stopStreams()
	ps.failed = true
	ps.line, ps.strings, ps.walk.decoded, ps.walk.text, ps.found = nil, nil, nil, "", nil
	for i := range ps.scans {
		ps.scans[i].hits, ps.scans[i].finds = nil, nil
	}
}

func (ps *Prescan) stopStreams() {
	for i := range ps.scans {
		if sc := &ps.scans[i]; sc.stream != nil {
			sc.stream.Stop()
			sc.stream = nil
		}
	}
}

// walkTo walks line as far as it goes, recording and scanning each string
// value completed.
func (ps *Prescan) walkTo(line []byte, final bool) {
	for {
		switch ps.walk.step(line, final) {
		case stepMore: // final: the line is read (one that ends inside a string is stepBad)
			return
		case stepBad:
			ps.Stop()
			return
		case stepName:
			ps.stopStreams()
		case stepString:
			if len(ps.strings) >= ps.maxStrings {
				ps.Stop()
				return
			}
			if len(ps.strings) == cap(ps.strings) {
				ps.strings = slices.Grow(ps.strings, max(len(ps.strings), 64))
			}
			ps.strings = append(ps.strings, ps.walk.last)
			ps.scanLast()
		}
	}
}

// scanLast has every streaming detector scan the string completed last:
// the stream started for it finished, or the string scanned whole.
func (ps *Prescan) scanLast() {
	index := len(ps.strings) - 1
	text := ps.strings[index].s
	for i := range ps.scans {
		sc := &ps.scans[i]
		if sc.stream != nil {
			ps.found = sc.stream.Finish(text, ps.found[:0])
			sc.stream = nil
		} else {
			ps.found = sc.det.Scan(text, ps.found[:0])
		}
		if len(ps.found) > 0 {
			lo := len(sc.finds)
			sc.finds = append(sc.finds, ps.found...)
			sc.hits = append(sc.hits, prescanHit{index, lo, len(sc.finds)})
		}
	}
}

// sharedFor returns the strings of msg as the prescan found them, or nil:
// msg must be a JSON object or array in the finished line's memory (a
// member's value: the result of a response).
func (ps *Prescan) sharedFor(msg []byte) *sharedStrings {
	base, ok := ps.at(msg)
	if !ok || msg[0] != '{' && msg[0] != '[' {
		return nil
	}
	end := base + len(msg)
	first := sort.Search(len(ps.strings), func(i int) bool { return ps.strings[i].open >= base })
	last := sort.Search(len(ps.strings), func(i int) bool { return ps.strings[i].open >= end })
	if first > 0 && ps.strings[first-1].end >= base || last > first && ps.strings[last-1].end >= end {
		return nil // msg cuts a string: not a value of the line
	}
	ss := &sharedStrings{msg: msg, strings: ps.strings[first:last], base: base, pre: ps, first: first}
	ss.once.Do(func() {}) // decoded already
	return ss
}

// foundBy returns what p's detector found in the strings of ss, if the
// prescan scanned them for p: the hits (their index in ss.strings is
// index-first) and the findings they point into.
func (ss *sharedStrings) foundBy(p *textScan) ([]prescanHit, []detect.Finding, bool) {
	if ss.pre == nil {
		return nil, nil, false
	}
	for i := range ss.pre.scans {
		sc := &ss.pre.scans[i]
		if sc.policy != p {
			continue
		}
		from := sort.Search(len(sc.hits), func(k int) bool { return sc.hits[k].index >= ss.first })
		to := sort.Search(len(sc.hits), func(k int) bool { return sc.hits[k].index >= ss.first+len(ss.strings) })
		return sc.hits[from:to], sc.finds, true
	}
	return nil, nil, false
}

// Covers reports whether the prescan is finished and msg is in the memory
// of the line it read: a caller with several prescans finds msg's so.
func (ps *Prescan) Covers(msg []byte) bool {
	_, ok := ps.at(msg)
	return ok
}

// at returns where msg is in the finished line, if it is in its memory.
func (ps *Prescan) at(msg []byte) (int, bool) {
	if ps == nil || !ps.finished || ps.failed || len(msg) == 0 {
		return 0, false
	}
	base := int(uintptr(unsafe.Pointer(unsafe.SliceData(msg))) - uintptr(unsafe.Pointer(unsafe.SliceData(ps.line))))
	return base, base >= 0 && base <= len(ps.line)-len(msg)
}
