package secrets

import "github.com/mcpgate/mcpgate/internal/detect"

// streamReach bounds how far past the start of a keyword its rule's
// attempt there reads, open-ended rules (rule.open) apart: a keyword that
// far before the end of the text so far has the outcome it will have in
// the whole text. The largest of
//   - a pattern's longest match and the byte after it, which must not be
//     a letter or digit (TestStreamReachCoversEveryPattern: 5 KB at most);
//   - a PEM block (matchPEM): its header and label, a body of up to
//     pemMaxBlock, the footer's label and dashes (one found by an earlier
//     keyword's search, which began no later, may end a label later);
//   - a JWT (matchJWT): a header of up to jwtMaxHeader (a longer one is
//     read up to jwtMaxSegment and refused), two parts of up to
//     jwtMaxSegment, and the byte after each part;
//   - a PuTTY file (matchPuTTY): the search for its MAC line; the MAC's
//     digits have no bound, which puttyOpen tells.
const streamReach = max(
	len(pemBegin)+pemLabelMax+pemMaxBlock+len(pemEnd)+pemLabelMax+len(pemDash),
	jwtMaxSegment, jwtMaxHeader+2*jwtMaxSegment+3,
	puttyMaxFile+len(puttyMAC),
)

// Stream starts the scan of one text that arrives in pieces
// (detect.Streamer): each Advance does the part of Scan's work that the
// text so far settles, so that Finish, given the whole text, has about
// the last piece and streamReach bytes left, and appends exactly what
// Scan appends. A stream holds scratch like a Scan's (pooled) and
// offsets; it may run while other goroutines Scan or Stream with d.
func (d *Detector) Stream() detect.Stream {
	st := d.scratch.Get().(*scanState)
	st.reset()
	return &stream{d: d, st: st, runs: entropyRuns{start: -1}}
}

// stream is Scan cut where the text so far settles it. Scan tries the
// keywords in the order the prefilter reports them (by where they end),
// and each try reads at most streamReach bytes past its keyword: the
// prefilter runs up to streamReach before the end of the text so far,
// and resumes a keyword's length before where it stopped, skipping what
// it reported already. The keywords are then tried in Scan's order, with
// Scan's state (st.until, the PEM footer search), on bytes equal to
// Scan's: each gets Scan's outcome. Candidates are offsets; their order
// does not matter (resolve sorts them, and equal starts merge whatever
// their order).
type stream struct {
	d  *Detector
	st *scanState // nil once the stream has ended
	// tried: every keyword occurrence that ends at or before it has been
	// reported by the prefilter, and tried or deferred.
	tried int
	// length is the length of the last text: a text shorter than it
	// breaks the contract.
	length int
	// deferred are keywords of open-ended rules whose outcome the text so
	// far does not settle, in the prefilter's order. While one waits,
	// later keywords of such rules wait behind it, so that they are tried
	// in Scan's order (st.until). A PuTTY file waits while its MAC's
	// digits reach the end; other files can only begin before its MAC,
	// within puttyMaxFile: a few hundred at most.
	deferred []hit
	// openTo is the length of the text when the first deferred keyword
	// was last found open (rule.open).
	openTo int
	runs   entropyRuns
}

// Advance does the work of Scan that text, the text so far, settles.
func (s *stream) Advance(text string) {
	if s.st == nil || len(text) <= s.length {
		return
	}
	s.length = len(text)
	s.tryDeferred(text, false)
	if limit := len(text) - streamReach; limit > s.tried {
		s.prefilter(text, limit, false)
	}
	if s.d.highEntropy {
		s.st.cands = s.runs.appendRandom(text, false, s.st.cands)
	}
}

// Finish does the rest of Scan's work on the whole text and appends the
// findings to dst.
func (s *stream) Finish(text string, dst []detect.Finding) []detect.Finding {
	if s.st == nil || len(text) < s.length {
		// Ended already, or a text that does not continue the pieces: the
		// caller broke the contract; the answer is still Scan's.
		s.Stop()
		return s.d.Scan(text, dst)
	}
	s.tryDeferred(text, true)
	s.prefilter(text, len(text), true)
	if s.d.highEntropy {
		s.st.cands = s.runs.appendRandom(text, true, s.st.cands)
	}
	dst = s.d.resolve(s.st.cands, dst)
	s.Stop()
	return dst
}

// Stop ends the stream: its scratch goes back to the pool.
func (s *stream) Stop() {
	if s.st != nil {
		s.d.scratch.Put(s.st)
		s.st, s.deferred = nil, nil
	}
}

// prefilter reports the keywords that end after s.tried and at or before
// limit, and tries them, or defers those of open-ended rules, unless
// final (text is whole: nothing is left open).
func (s *stream) prefilter(text string, limit int, final bool) {
	d, tried := s.d, s.tried
	from := max(0, tried-d.longestKeyword+1)
	d.pre.scan(text[from:limit], func(h hit) {
		h.start += from
		k := &d.pre.keywords[h.keyword]
		if h.start+len(k.text) <= tried || !d.wakes(text, h) {
			return
		}
		if open := d.rules[k.rule].open; open != nil && !final {
			switch {
			case len(s.deferred) > 0:
				s.deferred = append(s.deferred, h)
				return
			case h.start < s.st.until[k.rule]:
				return // as try does, without reading on
			case open(s.st, text, h.start, 0):
				s.deferred = append(s.deferred, h)
				s.openTo = len(text)
				return
			}
		}
		d.try(s.st, text, h)
	})
	s.tried = limit
}

// tryDeferred tries the deferred keywords in order, up to the first whose
// outcome text does not settle yet (none when final). Those an earlier
// match covers are dropped unread, as try drops them: a thousand PuTTY
// headers before one MAC of megabytes cost one read of it.
func (s *stream) tryDeferred(text string, final bool) {
	n := 0
	for _, h := range s.deferred {
		k := &s.d.pre.keywords[h.keyword]
		if !final && h.start >= s.st.until[k.rule] && s.d.rules[k.rule].open(s.st, text, h.start, s.openTo) {
			s.openTo = len(text)
			break
		}
		s.d.try(s.st, text, h)
		s.openTo = 0
		n++
	}
	s.deferred = s.deferred[:copy(s.deferred, s.deferred[n:])]
}
