package policy

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/config"
)

// pathsTree builds, under a temporary directory:
//
//	data/a.txt, data/sub/b.txt      the allowed root
//	data2/x                         a sibling whose name starts like the root
//	etc/secret                      outside
//	data/to-etc      -> <tmp>/etc   an absolute link out
//	data/up          -> ../etc      a relative link out
//	data/new-secret  -> <tmp>/etc/new  a dangling link out (a write creates etc/new)
//	data/to-sub      -> sub         a link that stays inside
//	data/loop        -> loop
//	linkroot         -> data        a root that is itself a link
func pathsTree(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"data/sub", "data2", "etc"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"data/a.txt", "data/sub/b.txt", "data2/x", "etc/secret"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("content that must never be shown"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"data/to-etc":     filepath.Join(dir, "etc"),
		"data/up":         "../etc",
		"data/new-secret": filepath.Join(dir, "etc/new"),
		"data/to-sub":     "sub",
		"data/loop":       "loop",
		"linkroot":        "data",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func mustPaths(t *testing.T, spec config.Policy) *pathsPolicy {
	t.Helper()
	spec.Name, spec.Path = "paths", "policies[0]"
	p, err := newPaths(spec, Env{})
	if err != nil {
		t.Fatal(err)
	}
	return p.(*pathsPolicy)
}

func ruleToolCall(name, args string) *Input {
	return &Input{
		Stage: Request, Session: "s1", Server: "fs", Method: "tools/call", Kind: "tool",
		Name: "fs__" + name, UpstreamName: name,
		Message: json.RawMessage(`{"name":"fs__` + name + `","arguments":` + args + `}`),
	}
}

func ruleJSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestPathsArguments(t *testing.T) {
	dir := pathsTree(t)
	p := mustPaths(t, config.Policy{Args: []string{"path", "paths", "source"}, Allow: []string{filepath.Join(dir, "data"), filepath.Join(dir, "linkroot")}})
	data := filepath.Join(dir, "data")
	tests := []struct {
		name string
		args string
		kind string // "": allowed
		arg  string // the argument the reason names
	}{
		{"file inside", `{"path":` + ruleJSONString(data+"/a.txt") + `}`, "", ""},
		{"new file inside", `{"path":` + ruleJSONString(data+"/sub/new.txt") + `}`, "", ""},
		{"the root itself", `{"path":` + ruleJSONString(data) + `}`, "", ""},
		{"root with a trailing slash", `{"path":` + ruleJSONString(data+"/") + `}`, "", ""},
		{"doubled and dot elements", `{"path":` + ruleJSONString(data+"//sub/./b.txt") + `}`, "", ""},
		{"a link that stays inside", `{"path":` + ruleJSONString(data+"/to-sub/b.txt") + `}`, "", ""},
		{"a root that is a link", `{"path":` + ruleJSONString(dir+"/linkroot/a.txt") + `}`, "", ""},
		{"other arguments are not paths", `{"path":` + ruleJSONString(data+"/a.txt") + `,"content":"/etc/passwd"}`, "", ""},
		{"missing argument", `{"content":"x"}`, "", ""},
		{"null argument", `{"path":null}`, "", ""},
		{"no arguments", `null`, "", ""},
		{"array inside", `{"paths":[` + ruleJSONString(data+"/a.txt") + `,` + ruleJSONString(data+"/sub/b.txt") + `]}`, "", ""},
		{"empty array", `{"paths":[]}`, "", ""},
		{"file URI", `{"path":` + ruleJSONString("file://"+data+"/a.txt") + `}`, "", ""},
		{"file URI, localhost", `{"path":` + ruleJSONString("file://localhost"+data+"/a.txt") + `}`, "", ""},
		{"file URI, percent-encoded space", `{"path":` + ruleJSONString("file://"+data+"/new%20file.txt") + `}`, "", ""},
		{"file URI, upper-case scheme", `{"path":` + ruleJSONString("FILE://"+data+"/a.txt") + `}`, "", ""},

		{"outside", `{"path":"/etc/passwd"}`, pathKindOutside, "path"},
		{"sibling sharing the root's prefix", `{"path":` + ruleJSONString(dir+"/data2/x") + `}`, pathKindOutside, "path"},
		{"the root's parent", `{"path":` + ruleJSONString(dir) + `}`, pathKindOutside, "path"},
		{"dot-dot", `{"path":` + ruleJSONString(data+"/../etc/secret") + `}`, pathKindTraversal, "path"},
		{"dot-dot that stays inside", `{"path":` + ruleJSONString(data+"/sub/../a.txt") + `}`, pathKindTraversal, "path"},
		{"dot-dot at the end", `{"path":` + ruleJSONString(data+"/sub/..") + `}`, pathKindTraversal, "path"},
		{"absolute link out", `{"path":` + ruleJSONString(data+"/to-etc/secret") + `}`, pathKindSymlink, "path"},
		{"relative link out", `{"path":` + ruleJSONString(data+"/up/secret") + `}`, pathKindSymlink, "path"},
		{"link out, file not there yet", `{"path":` + ruleJSONString(data+"/to-etc/created-later") + `}`, pathKindSymlink, "path"},
		{"dangling link out", `{"path":` + ruleJSONString(data+"/new-secret") + `}`, pathKindSymlink, "path"},
		{"link loop", `{"path":` + ruleJSONString(data+"/loop/x") + `}`, pathKindUnchecked, "path"},
		{"relative", `{"path":"a.txt"}`, pathKindRelative, "path"},
		{"dot-relative", `{"path":"./a.txt"}`, pathKindRelative, "path"},
		{"home", `{"path":"~/.ssh/id_rsa"}`, pathKindRelative, "path"},
		{"empty", `{"path":""}`, pathKindInvalid, "path"},
		{"NUL byte", `{"path":` + ruleJSONString(data+"/a.txt\x00.png") + `}`, pathKindInvalid, "path"},
		{"too long", `{"path":` + ruleJSONString(data+"/"+strings.Repeat("a", maxPathBytes)) + `}`, pathKindInvalid, "path"},
		{"Windows drive", `{"path":"C:\\Windows\\system32"}`, pathKindInvalid, "path"},
		{"Windows drive, forward slashes", `{"path":"C:/Windows/system32"}`, pathKindRelative, "path"},
		{"UNC", `{"path":"\\\\server\\share\\x"}`, pathKindInvalid, "path"},
		{"backslash dot-dot", `{"path":` + ruleJSONString(data+`\..\..\etc`) + `}`, pathKindTraversal, "path"},
		{"backslash in a name", `{"path":` + ruleJSONString(data+`\a.txt`) + `}`, pathKindInvalid, "path"},
		{"double slash host", `{"path":"//server/share"}`, pathKindOutside, "path"},
		{"number", `{"path":42}`, pathKindInvalid, "path"},
		{"object", `{"path":{"p":"/etc"}}`, pathKindInvalid, "path"},
		{"array with one outside", `{"paths":[` + ruleJSONString(data+"/a.txt") + `,"/etc/passwd"]}`, pathKindOutside, "paths[1]"},
		{"array with a number", `{"paths":[` + ruleJSONString(data+"/a.txt") + `,1]}`, pathKindInvalid, "paths[1]"},
		{"another named argument", `{"path":` + ruleJSONString(data+"/a.txt") + `,"source":"/etc/passwd"}`, pathKindOutside, "source"},
		{"key in another case", `{"PATH":"/etc/passwd"}`, pathKindOutside, "PATH"},
		{"duplicate key", `{"path":` + ruleJSONString(data+"/a.txt") + `,"path":"/etc/passwd"}`, pathKindInvalid, ""},
		{"arguments not an object", `["/etc/passwd"]`, pathKindInvalid, ""},
		{"escaped string", `{"path":"\/etc\/passwd"}`, pathKindOutside, "path"},
		{"file URI outside", `{"path":"file:///etc/passwd"}`, pathKindOutside, "path"},
		{"file URI, encoded dot-dot", `{"path":` + ruleJSONString("file://"+data+"/%2e%2e/etc/secret") + `}`, pathKindTraversal, "path"},
		{"file URI, encoded slash and dot-dot", `{"path":` + ruleJSONString("file://"+data+"/..%2f..%2fetc") + `}`, pathKindTraversal, "path"},
		{"file URI, encoded twice", `{"path":` + ruleJSONString("file://"+data+"/%252e%252e/etc") + `}`, pathKindInvalid, "path"},
		{"file URI, other host", `{"path":"file://server/share/x"}`, pathKindInvalid, "path"},
		{"file URI, relative", `{"path":"file:a.txt"}`, pathKindInvalid, "path"},
		{"file URI, query", `{"path":` + ruleJSONString("file://"+data+"/x?/../../etc/passwd") + `}`, pathKindTraversal, "path"},
		{"file URI, fragment", `{"path":` + ruleJSONString("file://"+data+"/a.txt#x") + `}`, pathKindInvalid, "path"},
		{"file URI, link out", `{"path":` + ruleJSONString("file://"+data+"/to-etc/secret") + `}`, pathKindSymlink, "path"},
		{"other scheme", `{"path":"http://example.com/etc/passwd"}`, pathKindRelative, "path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := p.Decide(context.Background(), ruleToolCall("read_file", tt.args))
			if tt.kind == "" {
				if d.Action != Allow {
					t.Fatalf("got %v (%s), want allow", d.Action, d.Reason)
				}
				return
			}
			if d.Action != Deny {
				t.Fatalf("got %v, want deny (%s)", d.Action, tt.kind)
			}
			if len(d.Findings) != 1 || d.Findings[0].Kind != tt.kind || d.Findings[0].Count != 1 {
				t.Errorf("findings %+v, want one %q (reason %q)", d.Findings, tt.kind, d.Reason)
			}
			if tt.arg != "" && !strings.HasPrefix(d.Reason, `argument "`+tt.arg+`" `) {
				t.Errorf("reason %q does not start by naming argument %q", d.Reason, tt.arg)
			}
			for _, leak := range []string{"etc/secret", "passwd", "content that", "/etc/new", dir + "/etc"} {
				if strings.Contains(d.Reason, leak) {
					t.Errorf("reason %q repeats %q", d.Reason, leak)
				}
			}
		})
	}
}

func TestPathsAuditCountsEverything(t *testing.T) {
	dir := pathsTree(t)
	data := filepath.Join(dir, "data")
	p := mustPaths(t, config.Policy{Action: "audit", Args: []string{"paths"}, Allow: []string{data}})
	in := ruleToolCall("read_many", `{"paths":["/etc/a",`+ruleJSONString(data+"/a.txt")+`,"/etc/b","rel",`+ruleJSONString(data+"/up/x")+`]}`)
	d := p.Decide(context.Background(), in)
	if d.Action != Audit {
		t.Fatalf("got %v, want audit", d.Action)
	}
	got := map[string]int{}
	for _, f := range d.Findings {
		got[f.Kind] = f.Count
	}
	want := map[string]int{pathKindOutside: 2, pathKindRelative: 1, pathKindSymlink: 1}
	if len(got) != len(want) || got[pathKindOutside] != 2 || got[pathKindRelative] != 1 || got[pathKindSymlink] != 1 {
		t.Errorf("findings %v, want %v", got, want)
	}
	if want := `argument "paths[0]" is outside the allowed roots (` + data + `) (and 3 more)`; d.Reason != want {
		t.Errorf("reason %q, want %q", d.Reason, want)
	}
}

func TestPathsResourceURIs(t *testing.T) {
	dir := pathsTree(t)
	data := filepath.Join(dir, "data")
	read := func(uri, upstream string) *Input {
		return &Input{Stage: Request, Server: "fs", Method: "resources/read", Kind: "resource", Name: "fs__" + upstream, UpstreamName: upstream,
			Message: json.RawMessage(`{"uri":` + ruleJSONString(uri) + `}`)}
	}
	withURIs := mustPaths(t, config.Policy{Args: []string{"path"}, Allow: []string{data}, URIs: true})
	withoutURIs := mustPaths(t, config.Policy{Args: []string{"path"}, Allow: []string{data}})
	tests := []struct {
		name     string
		p        *pathsPolicy
		in       *Input
		wantDeny bool
	}{
		{"file URI inside", withURIs, read("file://"+data+"/a.txt", "file://"+data+"/a.txt"), false},
		{"file URI outside", withURIs, read("file:///etc/passwd", "file:///etc/passwd"), true},
		{"link out", withURIs, read("file://"+data+"/to-etc/secret", "file://"+data+"/to-etc/secret"), true},
		{"other scheme passes", withURIs, read("https://example.com/etc/passwd", "https://example.com/etc/passwd"), false},
		{"custom scheme passes", withURIs, read("db://table/..", "db://table/.."), false},
		{"namespaced in params, checked as sent upstream", withURIs, read("fs__file:///etc/passwd", "file:///etc/passwd"), true},
		{"without uris, not checked", withoutURIs, read("file:///etc/passwd", "file:///etc/passwd"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.p.Decide(context.Background(), tt.in)
			if (d.Action == Deny) != tt.wantDeny {
				t.Fatalf("got %v (%s), want deny=%v", d.Action, d.Reason, tt.wantDeny)
			}
			if tt.wantDeny && !strings.HasPrefix(d.Reason, "the URI ") {
				t.Errorf("reason %q does not name the URI", d.Reason)
			}
		})
	}
}

func TestPathsOtherStagesAndMethods(t *testing.T) {
	p := mustPaths(t, config.Policy{Args: []string{"path"}, Allow: []string{"/data"}, URIs: true})
	for _, in := range []*Input{
		{Stage: Result, Method: "tools/call", Message: json.RawMessage(`{"content":[{"type":"text","text":"/etc/passwd"}]}`)},
		{Stage: Request, Method: "prompts/get", Message: json.RawMessage(`{"name":"p","arguments":{"path":"/etc/passwd"}}`)},
	} {
		if d := p.Decide(context.Background(), in); d.Action != Allow {
			t.Errorf("%v %s: got %v, want allow", in.Stage, in.Method, d.Action)
		}
	}
}

func TestPathsConfigErrors(t *testing.T) {
	tests := []struct {
		spec config.Policy
		want string
	}{
		{config.Policy{Args: []string{"path"}, Allow: []string{"data"}}, `policies[0].allow[0]: "data" is not an absolute path`},
		{config.Policy{Args: nil, Allow: []string{"/data"}}, `policies[0].args: empty`},
		{config.Policy{Args: []string{""}, Allow: []string{"/data"}}, `policies[0].args[0]: empty`},
		{config.Policy{Args: []string{"path"}}, `policies[0].allow: empty`},
		{config.Policy{Args: []string{"path"}, Allow: []string{"/data"}, Action: "redact"}, `policies[0].action: paths takes "block" or "audit", not "redact"`},
	}
	for _, tt := range tests {
		tt.spec.Name, tt.spec.Path = "paths", "policies[0]"
		_, err := newPaths(tt.spec, Env{})
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want %q…", tt.spec, err, tt.want)
		}
	}
}

func TestResolvePath(t *testing.T) {
	dir := pathsTree(t)
	tests := []struct{ in, want string }{
		{dir + "/data/a.txt", dir + "/data/a.txt"},
		{dir + "/data/to-etc/secret", dir + "/etc/secret"},
		{dir + "/data/up/missing/deeper", dir + "/etc/missing/deeper"},
		{dir + "/data/new-secret", dir + "/etc/new"},
		{dir + "/linkroot/to-sub/b.txt", dir + "/data/sub/b.txt"},
		{dir + "/data/a.txt/under-a-file", dir + "/data/a.txt/under-a-file"},
		{"/", "/"},
	}
	for _, tt := range tests {
		got, err := resolvePath(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("resolvePath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := resolvePath(dir + "/data/loop"); err == nil {
		t.Errorf("resolvePath of a link loop: no error")
	}
}

// FuzzPathsValue checks that whatever a client sends, a value the policy
// lets through names a place under the root, lexically and on disk.
func FuzzPathsValue(f *testing.F) {
	for _, s := range []string{"/data/a", "/data/../etc", "file:///data/%2e%2e/x", "file://localhost/data/x", "C:\\x", "~/x", "/data/link/x", "", "file:", "file:///data/a?b#c", "/data\x00/x", "file:///data/%252e"} {
		f.Add(s)
	}
	dir := f.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		f.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(data, "link")); err != nil {
		f.Fatal(err)
	}
	pol, err := newPaths(config.Policy{Name: "paths", Args: []string{"path"}, Allow: []string{data}}, Env{})
	if err != nil {
		f.Fatal(err)
	}
	p := pol.(*pathsPolicy)
	f.Fuzz(func(t *testing.T, s string) {
		s = strings.ReplaceAll(s, "/data", data)
		d := p.Decide(context.Background(), ruleToolCall("read", `{"path":`+ruleJSONString(s)+`}`))
		if d.Action != Allow {
			return
		}
		path := s
		if hasFileScheme(s) {
			path, _ = filePathOfURI(s)
		}
		clean := filepath.Clean(path)
		if !pathWithin(p.roots[0].written, clean) || strings.Contains(path, "..") && hasDotDot(path) {
			t.Fatalf("%q allowed, but %q is not under %s", s, clean, data)
		}
		if r, err := resolvePath(clean); err != nil || !pathWithin(p.roots[0].resolved, r) {
			t.Fatalf("%q allowed, but it resolves to %q (%v)", s, r, err)
		}
	})
}

func BenchmarkPathsAllowed(b *testing.B) {
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "data", "sub"), 0o755); err != nil {
		b.Fatal(err)
	}
	p, err := newPaths(config.Policy{Name: "paths", Args: []string{"path"}, Allow: []string{filepath.Join(dir, "data")}}, Env{})
	if err != nil {
		b.Fatal(err)
	}
	in := ruleToolCall("read_file", `{"path":`+ruleJSONString(filepath.Join(dir, "data", "sub", "a.txt"))+`,"encoding":"utf-8"}`)
	b.ReportAllocs()
	for b.Loop() {
		if d := p.Decide(context.Background(), in); d.Action != Allow {
			b.Fatal(d.Reason)
		}
	}
}
