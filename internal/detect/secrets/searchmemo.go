package secrets

import "strings"

// searchMemo remembers a search for a literal in a text: the first
// occurrence that lies whole in text[from:limit] (at; -1 for none; limit
// 0: no search yet). A search that begins within the one remembered reads
// only what that one did not: a rule that searches far past its keyword
// (a PuTTY file's MAC line, 16 KiB on) would otherwise read the same bytes
// again at each keyword of a flood of them, a MiB of headers costing a
// second. Its answers are a fresh search's, whatever came before.
type searchMemo struct{ from, limit, at int }

// index returns where the first pattern lying whole in text[from:limit]
// begins, or -1.
func (m *searchMemo) index(text, pattern string, from, limit int) int {
	start := from
	if m.limit > 0 && m.from <= from && from <= m.limit {
		switch {
		case m.at >= from:
			// No occurrence begins in [from, m.at): it would lie whole
			// before m.limit, and be the one remembered.
			if m.at+len(pattern) <= limit {
				return m.at
			}
			return -1
		case m.at < 0 && limit <= m.limit:
			return -1
		case m.at < 0:
			start = max(from, m.limit-len(pattern)+1)
		}
	}
	m.from, m.limit, m.at = from, limit, -1
	if i := strings.Index(text[start:limit], pattern); i >= 0 {
		m.at = start + i
	}
	return m.at
}
