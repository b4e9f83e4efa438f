package injection

import (
	"slices"
	"strings"
)

// Peers is what the gateway knows of its servers, for the shadowing check:
// a definition from one server that names a tool or server of another is
// steering the model toward (or around) something it does not own. Build it
// once per change of the tool lists; it is read-only afterwards and safe for
// concurrent use.
type Peers struct {
	servers map[string]bool     // lower-case server names
	tools   map[string][]string // lower-case tool name -> servers serving it (mostly one: a map each was most of the index's memory)
}

// NewPeers indexes toolsByServer: server name -> names of its tools, as the
// servers list them (not prefixed).
func NewPeers(toolsByServer map[string][]string) *Peers {
	p := &Peers{servers: map[string]bool{}, tools: map[string][]string{}}
	for server, tools := range toolsByServer {
		server = strings.ToLower(server)
		p.servers[server] = true
		for _, t := range tools {
			t = strings.ToLower(t)
			if owners := p.tools[t]; !slices.Contains(owners, server) {
				p.tools[t] = append(owners, server)
			}
		}
	}
	return p
}

// What a server name must be followed by to be a reference to that server
// rather than the ordinary word ("the filesystem server tools", not "read
// from the filesystem").
var serverNouns = []string{"server", "servers", "mcp", "tool", "tools", "integration", "connector", "plugin"}

// shadowing appends a shadowing finding for each reference in text to a
// tool or server that is not the definition's own:
//
//   - a gateway name server__tool whose server is another one;
//   - another server's tool name, when the name is distinctive (it has a
//     '_', '-' or '.', or is camelCase) or is quoted (`fetch`, 'query'),
//     and the definition's own server has no tool of that name;
//   - another server's name followed by "server", "tools", "mcp"...
//
// Names that two servers both serve are not reported as collisions: the
// gateway prefixes every name with its server, so they cannot be confused.
func (w *walker) shadowing(text string, found []rawFinding) []rawFinding {
	lower := asciiLower(text)
	for i := 0; i < len(lower); {
		if !isNameByte(lower[i]) {
			i++
			continue
		}
		j := i
		for j < len(lower) && isNameByte(lower[j]) {
			j++
		}
		end := j
		for end > i && (lower[end-1] == '.' || lower[end-1] == '-') {
			end--
		}
		if end > i && w.shadows(text, lower, i, end) && !framedAsExample([]byte(lower), i, end) {
			found = append(found, rawFinding{Kind: KindShadowing, Start: i, End: end})
		}
		i = j
	}
	return found
}

func (w *walker) shadows(text, lower string, i, j int) bool {
	tok := lower[i:j]
	if k := strings.Index(tok, "__"); k > 0 {
		server := tok[:k]
		return server != w.server && w.peers.servers[server]
	}
	if owners := w.peers.tools[tok]; len(owners) > 0 && tok != w.self && !slices.Contains(owners, w.server) {
		if distinctiveName(text[i:j]) || quotedAt(lower, i, j) {
			return true
		}
	}
	if tok != w.server && w.peers.servers[tok] && len(tok) >= 3 {
		k := j
		for k < len(lower) && lower[k] == ' ' {
			k++
		}
		m := k
		for m < len(lower) && 'a' <= lower[m] && lower[m] <= 'z' {
			m++
		}
		return k > j && slices.Contains(serverNouns, lower[k:m])
	}
	return false
}

// distinctiveName reports whether a tool name cannot be an ordinary word:
// send_email, get-library-docs, longRunningOperation.
func distinctiveName(name string) bool {
	if len(name) < 5 {
		return false
	}
	if strings.ContainsAny(name, "_-.") {
		return true
	}
	for k := 1; k < len(name); k++ {
		if 'a' <= name[k-1] && name[k-1] <= 'z' && 'A' <= name[k] && name[k] <= 'Z' {
			return true
		}
	}
	return false
}

func quotedAt(s string, i, j int) bool {
	if i == 0 || j >= len(s) {
		return false
	}
	switch s[i-1] {
	case '`', '\'', '"':
		return s[j] == s[i-1]
	}
	return false
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.'
}

// asciiLower is s with A-Z lower-cased: s itself when it has none, else
// one copy (converted to bytes and back, each string of a first list's 100
// definitions was two copies, 37 KB of garbage in an idle gateway).
func asciiLower(s string) string {
	i := 0
	for i < len(s) && !('A' <= s[i] && s[i] <= 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}
