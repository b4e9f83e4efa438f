package proxy

import "strings"

// uriTemplate is a server's resource template, compiled to tell whether a
// URI could have been made from it: how mcpgate finds the owner of an
// unprefixed URI that no server listed (DESIGN D7).
//
// Supported is RFC 6570 level 1, simple string expansion, plus reserved
// expansion, the two forms servers use for resource templates:
//
//   - {var} matches a non-empty run of characters none of which is '/', '?'
//     or '#': a level-1 expansion percent-encodes those, so where they appear
//     the URI has left the variable.
//   - {+var} matches any non-empty run of characters ('/' included), as a
//     reserved expansion leaves reserved characters as they are.
//
// Literal text matches itself exactly. A template using any other operator
// ({#var}, {/var}, {?a,b}…), several variables in one expression, a
// modifier ({var:3}, {var*}) or an unbalanced brace matches nothing: such a
// URI can still be read with its server's prefix.
type uriTemplate struct {
	parts []templatePart
}

type templatePart struct {
	literal string // matched exactly; "" for an expression
	anyRun  bool   // for an expression: {+var}, which may span '/'
}

// parseURITemplate compiles a template, reporting false for one that uses
// anything beyond the forms above.
func parseURITemplate(s string) (uriTemplate, bool) {
	var t uriTemplate
	for s != "" {
		open := strings.IndexByte(s, '{')
		if end := strings.IndexByte(s, '}'); end >= 0 && (open < 0 || end < open) {
			return uriTemplate{}, false
		}
		if open < 0 {
			t.parts = append(t.parts, templatePart{literal: s})
			break
		}
		if open > 0 {
			t.parts = append(t.parts, templatePart{literal: s[:open]})
		}
		end := strings.IndexByte(s[open:], '}')
		if end < 0 {
			return uriTemplate{}, false
		}
		expr := s[open+1 : open+end]
		part := templatePart{}
		if rest, ok := strings.CutPrefix(expr, "+"); ok {
			part.anyRun, expr = true, rest
		}
		if !validVarName(expr) {
			return uriTemplate{}, false
		}
		t.parts = append(t.parts, part)
		s = s[open+end+1:]
	}
	return t, true
}

// validVarName reports whether name is an RFC 6570 varname: ALPHA, DIGIT,
// '_' and pct-encoded triplets, with single dots between them.
func validVarName(name string) bool {
	if name == "" || name[0] == '.' || name[len(name)-1] == '.' || strings.Contains(name, "..") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.':
		case c == '%' && i+2 < len(name) && isHex(name[i+1]) && isHex(name[i+2]):
			i += 2
		default:
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// match reports whether uri could be an expansion of t. It follows every
// way of splitting uri at once (the set of positions reachable after each
// part), so it takes time proportional to len(uri) times the template's
// length, never exponential time, whatever the template.
func (t uriTemplate) match(uri string) bool {
	if len(t.parts) == 0 {
		return uri == ""
	}
	if first := t.parts[0]; first.literal != "" && !strings.HasPrefix(uri, first.literal) {
		return false // the common case, settled without allocating
	}
	n := len(uri)
	cur, next := make([]bool, n+1), make([]bool, n+1)
	cur[0] = true
	for _, p := range t.parts {
		clear(next)
		reached := false
		switch {
		case p.literal != "":
			for i := 0; i+len(p.literal) <= n; i++ {
				if cur[i] && uri[i:i+len(p.literal)] == p.literal {
					next[i+len(p.literal)], reached = true, true
				}
			}
		default:
			// A run may start at any reachable position and extend while
			// its characters are allowed: every position after one of its
			// characters is reachable.
			inRun := false
			for i := 0; i < n; i++ {
				if cur[i] {
					inRun = true
				}
				if !p.anyRun && (uri[i] == '/' || uri[i] == '?' || uri[i] == '#') {
					inRun = false
					continue
				}
				if inRun {
					next[i+1], reached = true, true
				}
			}
		}
		if !reached {
			return false
		}
		cur, next = next, cur
	}
	return cur[n]
}
