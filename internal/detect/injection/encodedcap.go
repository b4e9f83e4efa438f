package injection

import (
	"cmp"
	"slices"
)

// maxEncodedFindings caps the encoded_payload findings of one text: a
// result of megabytes of encoded commands ("%63%75%72%6c%20%78%7c%73%68 "
// repeated) would otherwise be a finding every few dozen bytes, 600,000 for
// 16 MiB, held by every list they pass through (426 MB allocated). Past the
// cap, the findings kept are the first maxEncodedFindings, every one that
// covers the start of a finding of another kind (dropped, it would let
// that finding into the result), and the last of the others that Scan
// keeps: the kinds found, so the policy's verdict and the kinds its reason
// names, stay those of the whole list.
const maxEncodedFindings = 256

// encodedCap is how scanEncoded caps its findings: max (0: no cap),
// counting those starting in [lo, hi) only, as findingCap does for the
// Unicode kinds (the pieces of a text, capped on their own, are capped
// again once merged: capEncoded).
//
// Past the cap, it follows Scan's choice among overlapping findings. The
// findings of other kinds are known before the encoded ones are looked
// for, and these come in the order of their starts, never overlapping one
// another (a token holds no break, and its runs are apart). So as each
// comes, it is known whether Scan keeps it (no finding kept before it
// reaches its start) and whether it covers the start of a finding of
// another kind. Dropping one Scan drops changes nothing; dropping one Scan
// keeps that covers no other start changes nothing but itself.
type encodedCap struct {
	max, lo, hi int
	// base is where the encoded findings start in the list scanEncoded
	// appends to: before it, the findings of the other kinds.
	base  int
	count int // encoded findings seen in [lo, hi)
	// Past the cap: others are the findings before base in Scan's order,
	// those not yet passed; end is where the last finding Scan keeps ends;
	// over is the index of the finding standing for the uncovering ones
	// past the cap (the latest), -1 before the first.
	following bool
	others    []rawFinding
	end       int
	over      int
}

// add appends f, an encoded finding, to found, or drops it past the cap.
func (c *encodedCap) add(found []rawFinding, f rawFinding) []rawFinding {
	if c.max <= 0 || f.Start < c.lo || f.Start >= c.hi {
		return append(found, f)
	}
	c.count++
	if c.count <= c.max {
		return append(found, f)
	}
	if !c.following {
		c.follow(found)
	}
	kept, covering := c.pass(f)
	switch {
	case !kept:
		return found
	case covering:
		return append(found, f)
	case c.over < 0:
		c.over = len(found)
		return append(found, f)
	}
	found[c.over] = f
	return found
}

// follow starts following Scan's choice: the other findings, sorted as
// Scan sorts them, and the encoded ones found so far passed.
func (c *encodedCap) follow(found []rawFinding) {
	c.following, c.over, c.end = true, -1, 0
	c.others = slices.Clone(found[:c.base])
	slices.SortFunc(c.others, scanOrder)
	for _, f := range found[c.base:] {
		c.pass(f)
	}
}

// pass moves Scan's choice past the encoded finding f: it reports whether
// Scan keeps f, and if so whether f covers the start of a finding of
// another kind, which Scan then drops.
func (c *encodedCap) pass(f rawFinding) (kept, covering bool) {
	for len(c.others) > 0 && scanOrder(c.others[0], f) < 0 {
		if o := c.others[0]; o.Start >= c.end {
			c.end = o.End
		}
		c.others = c.others[1:]
	}
	if f.Start < c.end {
		return false, false
	}
	c.end = f.End
	return true, len(c.others) > 0 && c.others[0].Start < f.End
}

// scanOrder is the order Scan settles overlaps in: by start, the longer
// first.
func scanOrder(a, b rawFinding) int {
	if c := cmp.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	return cmp.Compare(b.End, a.End)
}

// capEncoded applies the cap of max encoded findings to found, the
// findings of a text's pieces merged, in place: the first max, and the
// last. The pieces are quiet (no phrase matches, and a Unicode finding
// never overlaps a token), so none covers another: the first max of the
// whole text are among the first max of its pieces, and its last is the
// last of its last piece with any.
func capEncoded(found []rawFinding, max int) []rawFinding {
	if max <= 0 {
		return found
	}
	kept, over := 0, 0
	out := found[:0]
	for _, f := range found {
		if f.Kind == KindEncodedPayload {
			kept++
			switch {
			case kept > max+1:
				out[over] = f
				continue
			case kept == max+1:
				over = len(out)
			}
		}
		out = append(out, f)
	}
	return out
}
