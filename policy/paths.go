package policy

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/internal/rawjson"
)

// The paths policy keeps the file paths a client passes to a server inside
// the roots the operator allows, the way a careful filesystem server checks
// them itself: it is the net under servers that do not.
//
// It reads tools/call's named arguments (top-level keys only: a path
// nested in an object has no name the config could give) and, with
// "uris", resources/read's file: URI. A value may be an absolute path or a
// file: URI; anything else is refused, because the gateway cannot know
// what the server would resolve it against.

// maxPathBytes is the longest path checked; longer ones are refused
// (Linux's PATH_MAX: the kernel would refuse them too).
const maxPathBytes = 4096

// maxSymlinks is how many symbolic links one path may pass through
// (Linux's limit for one lookup).
const maxSymlinks = 40

type pathsPolicy struct {
	name  string
	args  []string // argument names, matched as encoding/json matches keys
	roots []pathRoot
	shown string // the roots as written, for reasons: "/data, /srv"
	block bool
	uris  bool
}

type pathRoot struct {
	written  string // cleaned, as configured: where a requested path must be
	resolved string // with symlinks resolved when the policy was made: where the file must be
}

func newPaths(spec config.Policy, env Env) (Policy, error) {
	p := &pathsPolicy{name: spec.Name, uris: spec.URIs, block: spec.Action != "audit"}
	if spec.Action != "" && spec.Action != "block" && spec.Action != "audit" {
		return nil, fmt.Errorf(`%s.action: paths takes "block" or "audit", not %q`, spec.Path, spec.Action)
	}
	if len(spec.Args) == 0 {
		return nil, fmt.Errorf(`%s.args: empty; name the arguments that hold paths, like ["path", "source"]`, spec.Path)
	}
	for i, a := range spec.Args {
		if a == "" {
			return nil, fmt.Errorf("%s.args[%d]: empty; give the argument's name", spec.Path, i)
		}
	}
	p.args = spec.Args
	if len(spec.Allow) == 0 {
		return nil, fmt.Errorf(`%s.allow: empty; give the roots paths must be under, like ["/data"]`, spec.Path)
	}
	var shown []string
	for i, r := range spec.Allow {
		if !filepath.IsAbs(r) {
			return nil, fmt.Errorf("%s.allow[%d]: %q is not an absolute path; roots must be absolute", spec.Path, i, r)
		}
		written := filepath.Clean(r)
		resolved, err := resolvePath(written)
		if err != nil {
			return nil, fmt.Errorf("%s.allow[%d]: cannot resolve %q: %v", spec.Path, i, r, err)
		}
		p.roots = append(p.roots, pathRoot{written: written, resolved: resolved})
		shown = append(shown, written)
	}
	p.shown = strings.Join(shown, ", ")
	return p, nil
}

func (p *pathsPolicy) Name() string    { return p.name }
func (p *pathsPolicy) Stages() []Stage { return requestStage }

// pathFault is one refused value: which argument, and why.
type pathFault struct {
	arg   string // `argument "path"`, `argument "paths[2]"`, `URI`
	kind  string // the finding's kind
	cause string // what is wrong, without the value
}

// Finding kinds of the paths policy.
const (
	pathKindInvalid   = "invalid"    // not a path this policy can check
	pathKindRelative  = "relative"   // not absolute
	pathKindTraversal = "traversal"  // contains ".."
	pathKindOutside   = "outside"    // not under an allowed root
	pathKindSymlink   = "symlink"    // under a root, but a link leads out
	pathKindUnchecked = "unreadable" // part of it could not be looked up
)

func (p *pathsPolicy) Decide(ctx context.Context, in *Input) Decision {
	if in.Stage != Request {
		return Decision{}
	}
	var faults []pathFault
	// Audit looks at everything; block stops at the first fault.
	report := func(f pathFault) bool {
		faults = append(faults, f)
		return !p.block
	}
	switch in.Method {
	case "tools/call":
		p.checkArguments(in.Message, report)
	case "resources/read":
		if p.uris {
			p.checkResource(in, report)
		}
	}
	if len(faults) == 0 {
		return Decision{}
	}
	d := Decision{Action: Audit, Reason: pathReason(faults)}
	if p.block {
		d.Action = Deny
	}
	counts := map[string]int{}
	for _, f := range faults {
		if counts[f.kind] == 0 {
			d.Findings = append(d.Findings, Finding{Kind: f.kind})
		}
		counts[f.kind]++
	}
	for i := range d.Findings {
		d.Findings[i].Count = counts[d.Findings[i].Kind]
	}
	return d
}

func pathReason(faults []pathFault) string {
	r := faults[0].arg + " " + faults[0].cause
	if len(faults) > 1 {
		r += fmt.Sprintf(" (and %d more)", len(faults)-1)
	}
	return r
}

// checkArguments checks the named arguments of tools/call's params. Keys
// are matched as Go's encoding/json matches them to a server's fields
// (case-insensitively), so that "PATH" does not slip past a rule on "path".
func (p *pathsPolicy) checkArguments(params []byte, report func(pathFault) bool) {
	args, ok := pathArguments(params, report)
	if !ok {
		return
	}
	for _, m := range args {
		if !p.named(m.Key) {
			continue
		}
		switch {
		case m.Value[0] == '"':
			if f, bad := p.checkString(m.Value); bad {
				f.arg = argumentName(m.Key, -1)
				if !report(f) {
					return
				}
			}
		case m.Value[0] == '[':
			elems, _ := rawjson.ElementsValid(m.Value)
			for i, e := range elems {
				if f, bad := p.checkString(e); bad {
					f.arg = argumentName(m.Key, i)
					if !report(f) {
						return
					}
				}
			}
		case string(m.Value) == "null":
			// As good as absent: the server sees no path.
		default:
			if !report(pathFault{argumentName(m.Key, -1), pathKindInvalid, "is not a path: give a string or an array of strings"}) {
				return
			}
		}
	}
}

// argumentName names an argument, or one element of it, in a reason.
func argumentName(key string, elem int) string {
	if elem >= 0 {
		key = fmt.Sprintf("%s[%d]", key, elem)
	}
	return fmt.Sprintf("argument %q", key)
}

// checkString checks a JSON value that must be a string holding a path.
func (p *pathsPolicy) checkString(raw []byte) (pathFault, bool) {
	if raw[0] != '"' {
		return pathFault{kind: pathKindInvalid, cause: "is not a string"}, true
	}
	s, err := rawjson.Unquote(raw)
	if err != nil {
		return pathFault{kind: pathKindInvalid, cause: "is not a valid JSON string"}, true
	}
	return p.checkValue(s)
}

// pathArguments returns the members of params.arguments. Params that
// cannot be read are refused: the server might read them differently (a
// duplicate key, say, that it takes the last of).
func pathArguments(params []byte, report func(pathFault) bool) (rawjson.MemberList, bool) {
	if len(params) == 0 {
		return nil, false
	}
	ms, err := rawjson.Members(params)
	if err != nil {
		report(pathFault{"the request", pathKindInvalid, "cannot be read: " + err.Error()})
		return nil, false
	}
	raw, ok := ms.Get("arguments")
	if !ok || string(raw) == "null" {
		return nil, false
	}
	args, err := rawjson.SplitValid(raw)
	if err != nil {
		report(pathFault{"the arguments", pathKindInvalid, "are not a JSON object"})
		return nil, false
	}
	return args, true
}

func (p *pathsPolicy) named(key string) bool {
	for _, a := range p.args {
		if strings.EqualFold(a, key) {
			return true
		}
	}
	return false
}

// checkResource checks resources/read's URI if it is a file: URI; other
// schemes are the server's business. Both the params' URI and the name it
// is sent upstream under are checked, whichever the gateway gives.
func (p *pathsPolicy) checkResource(in *Input, report func(pathFault) bool) {
	var uris []string
	if ms, err := rawjson.Members(in.Message); err != nil {
		if !report(pathFault{"the request", pathKindInvalid, "cannot be read: " + err.Error()}) {
			return
		}
	} else {
		for _, m := range ms {
			if strings.EqualFold(m.Key, "uri") && len(m.Value) > 0 && m.Value[0] == '"' {
				if s, err := rawjson.Unquote(m.Value); err == nil {
					uris = append(uris, s)
				}
			}
		}
	}
	if in.UpstreamName != "" && (len(uris) == 0 || uris[0] != in.UpstreamName) {
		uris = append(uris, in.UpstreamName)
	}
	for _, u := range uris {
		if !hasFileScheme(u) {
			continue
		}
		if f, bad := p.checkValue(u); bad {
			f.arg = "the URI"
			if !report(f) {
				return
			}
		}
	}
}

func hasFileScheme(s string) bool {
	return len(s) >= 5 && strings.EqualFold(s[:5], "file:")
}

// checkValue checks one path or file: URI.
func (p *pathsPolicy) checkValue(s string) (pathFault, bool) {
	if len(s) > maxPathBytes {
		return pathFault{kind: pathKindInvalid, cause: fmt.Sprintf("is longer than %d bytes", maxPathBytes)}, true
	}
	if hasDotDot(s) {
		// Refused rather than cleaned away: the kernel resolves "a/link/.."
		// after following link, so lexical cleaning can be wrong.
		return pathFault{kind: pathKindTraversal, cause: `contains ".."; give the path without it`}, true
	}
	path := s
	if hasFileScheme(s) {
		var cause string
		if path, cause = filePathOfURI(s); cause != "" {
			return pathFault{kind: pathKindInvalid, cause: cause}, true
		}
		if hasDotDot(path) {
			return pathFault{kind: pathKindTraversal, cause: `contains ".." (percent-encoded); give the path without it`}, true
		}
	}
	switch {
	case path == "":
		return pathFault{kind: pathKindInvalid, cause: "is empty"}, true
	case strings.IndexByte(path, 0) >= 0:
		return pathFault{kind: pathKindInvalid, cause: "contains a NUL byte"}, true
	case filepath.Separator == '/' && strings.IndexByte(path, '\\') >= 0:
		// A server on Windows, or one that normalises separators, would
		// read a backslash as a separator; here it is part of a name.
		return pathFault{kind: pathKindInvalid, cause: "contains a backslash; use / as the separator"}, true
	case !filepath.IsAbs(path):
		// Relative to what? The server's working directory, which the
		// gateway does not know; "~" is the server's home, likewise.
		return pathFault{kind: pathKindRelative, cause: "is not an absolute path; give it from the root (under " + p.shown + ")"}, true
	}
	clean := filepath.Clean(path)
	root, ok := p.rootOf(clean)
	if !ok {
		return pathFault{kind: pathKindOutside, cause: "is outside the allowed roots (" + p.shown + ")"}, true
	}
	// The root was resolved when the policy was made: only what is below it
	// needs looking up.
	resolved, err := resolveFrom(root.resolved, clean[len(root.written):])
	if err != nil {
		// Fail closed: what the gateway cannot look up, the server (maybe
		// another user) might.
		return pathFault{kind: pathKindUnchecked, cause: "cannot be checked against the allowed roots (part of it cannot be looked up here)"}, true
	}
	if !p.under(resolved) {
		// The same words as a plain outside path: the client learns nothing
		// about where links lead.
		return pathFault{kind: pathKindSymlink, cause: "is outside the allowed roots (" + p.shown + ")"}, true
	}
	return pathFault{}, false
}

// rootOf returns the root a clean path is written under.
func (p *pathsPolicy) rootOf(path string) (pathRoot, bool) {
	for _, r := range p.roots {
		if pathWithin(r.written, path) {
			return r, true
		}
	}
	return pathRoot{}, false
}

// under reports whether a resolved path is under a resolved root.
func (p *pathsPolicy) under(resolved string) bool {
	for _, r := range p.roots {
		if pathWithin(r.resolved, resolved) {
			return true
		}
	}
	return false
}

// pathWithin reports whether clean path is root or under it. Names compare
// exactly, even where the file system ignores case: a path spelled
// differently from its root is refused, never let through.
func pathWithin(root, path string) bool {
	if !strings.HasPrefix(path, root) {
		return false
	}
	return len(path) == len(root) || os.IsPathSeparator(root[len(root)-1]) || os.IsPathSeparator(path[len(root)])
}

// hasDotDot reports whether s has a ".." element, between any of the
// separators a path or URI may use.
func hasDotDot(s string) bool {
	for len(s) > 0 {
		i := strings.IndexAny(s, `/\?#`)
		elem := s
		if i >= 0 {
			elem, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		if elem == ".." {
			return true
		}
	}
	return false
}

// filePathOfURI returns the local path a file: URI names, or why it
// cannot be checked.
func filePathOfURI(s string) (string, string) {
	if strings.ContainsAny(s, "?#") {
		// A server that strips "file://" and opens the rest would read them
		// as part of the path.
		return "", "is a file URI with a query or fragment; give the path alone"
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", "is not a valid file URI"
	}
	switch {
	case u.Opaque != "":
		return "", `is a relative file URI; write it as "file:///absolute/path"`
	case u.User != nil || (u.Host != "" && !strings.EqualFold(u.Host, "localhost")):
		return "", "is a file URI naming another host"
	}
	if stillPercentEncoded(u.Path) {
		// Decoded once, it still holds escapes: a server that decodes twice
		// would read something else than was checked here.
		return "", "is percent-encoded twice"
	}
	path := u.Path
	if filepath.Separator == '\\' && len(path) >= 3 && path[0] == '/' && path[2] == ':' {
		path = filepath.FromSlash(path[1:]) // file:///C:/x
	}
	return path, ""
}

func indexPathSeparator(s string) int {
	for i := 0; i < len(s); i++ {
		if os.IsPathSeparator(s[i]) {
			return i
		}
	}
	return -1
}

func stillPercentEncoded(s string) bool {
	for i := 0; i+2 < len(s); i++ {
		if s[i] == '%' && pathIsHex(s[i+1]) && pathIsHex(s[i+2]) {
			return true
		}
	}
	return false
}

func pathIsHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// resolvePath resolves the symbolic links in clean absolute path p as the
// kernel does when a file is opened or created there: link by link, as far
// as the path exists. filepath.EvalSymlinks fails on a path that does not
// exist yet, and resolving only its existing parent would miss a dangling
// link ("/data/out" → "/etc/new") that a write follows.
func resolvePath(p string) (string, error) {
	vol := filepath.VolumeName(p)
	return resolveFrom(vol+string(filepath.Separator), p[len(vol):])
}

// resolveFrom resolves relative path rest under resolved, a directory
// whose own links are resolved already.
func resolveFrom(resolved, rest string) (string, error) {
	sep := string(filepath.Separator)
	links := 0
	exists := true
	for rest != "" {
		var elem string
		if i := indexPathSeparator(rest); i >= 0 {
			elem, rest = rest[:i], rest[i+1:]
		} else {
			elem, rest = rest, ""
		}
		switch elem {
		case "", ".":
			continue
		case "..": // only from a link's target: resolved has no links, so its parent is lexical
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, elem)
		if !exists {
			resolved = next
			continue
		}
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			// Nothing below a missing name (or a file) can exist, and no
			// link can be followed there.
			exists = false
			resolved = next
			continue
		case err != nil:
			return "", err
		case fi.Mode()&fs.ModeSymlink == 0:
			resolved = next
			continue
		}
		if links++; links > maxSymlinks {
			return "", errors.New("too many levels of symbolic links")
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			v := filepath.VolumeName(target)
			resolved, target = v+sep, target[len(v):]
		}
		rest = target + sep + rest
	}
	return resolved, nil
}
