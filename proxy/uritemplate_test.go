package proxy

import (
	"strings"
	"testing"
)

func TestURITemplateMatch(t *testing.T) {
	for _, tt := range []struct {
		template string
		uri      string
		want     bool
	}{
		{"demo://resource/dynamic/blob/{id}", "demo://resource/dynamic/blob/1", true},
		{"demo://resource/dynamic/blob/{id}", "demo://resource/dynamic/blob/", false},     // a value is never empty
		{"demo://resource/dynamic/blob/{id}", "demo://resource/dynamic/blob/1/2", false},  // {var} stops at '/'
		{"demo://resource/dynamic/blob/{id}", "demo://resource/dynamic/text/1", false},    // literal differs
		{"demo://resource/dynamic/blob/{id}", "DEMO://resource/dynamic/blob/1", false},    // literals are exact
		{"demo://resource/dynamic/blob/{id}", "demo://resource/dynamic/blob/a%2Fb", true}, // an encoded '/' is data
		{"file:///{path}", "file:///notes.txt", true},
		{"file:///{path}", "file:///a/b.txt", false},
		{"file:///{path}", "file:///a?x=1", false},
		{"file:///{path}", "file:///a#top", false},
		{"file:///{+path}", "file:///a/b.txt", true},
		{"file:///{+path}", "file:///a/b?x=1#top", true},
		{"file:///{+path}", "file:///", false},
		{"users/{id}.json", "users/7.json", true},
		{"users/{id}.json", "users/7.v2.json", true}, // the run may contain the next literal
		{"users/{id}.json", "users/7.json/x", false},
		{"{a}{b}", "xy", true},
		{"{a}{b}", "x", false},
		{"{+a}-{+b}-{+c}", "1-2-3", true},
		{"{+a}-{+b}-{+c}", "1-2", false},
		{"repo://{owner}/{name}/issues/{n}", "repo://me/mcpgate/issues/8", true},
		{"repo://{owner}/{name}/issues/{n}", "repo://me/issues/8", false},
		{"mem://fixed", "mem://fixed", true}, // no expression: the URI itself
		{"mem://fixed", "mem://fixed2", false},
		{"x://{var.sub}/{v%41r}", "x://a/b", true},
		// Beyond level 1 and {+var}: matches nothing.
		{"file:///{#frag}", "file:///#a", false},
		{"file:///{/path}", "file:///x", false},
		{"search://{?q,lang}", "search://?q=a", false},
		{"x://{a,b}", "x://1,2", false},
		{"x://{a:3}", "x://abc", false},
		{"x://{a*}", "x://abc", false},
		{"x://{}", "x://a", false},
		{"x://{a", "x://a", false},
		{"x://a}", "x://a}", false},
		{"x://{.a}", "x://a", false},
		{"x://{a b}", "x://a", false},
	} {
		tmpl, ok := parseURITemplate(tt.template)
		if got := ok && tmpl.match(tt.uri); got != tt.want {
			t.Errorf("template %q matching %q = %v, want %v", tt.template, tt.uri, got, tt.want)
		}
	}
}

// A template built to make a backtracking matcher take exponential time is
// matched in linear time: the test would not finish otherwise.
func TestURITemplateMatchNoBacktracking(t *testing.T) {
	tmpl, ok := parseURITemplate(strings.Repeat("{+v}a", 40) + "b")
	if !ok {
		t.Fatal("template refused")
	}
	if tmpl.match(strings.Repeat("a", 4000)) {
		t.Error("matched a URI without the final literal")
	}
}

func FuzzURITemplate(f *testing.F) {
	f.Add("file:///{+path}", "file:///a/b")
	f.Add("x://{a}{b}.json", "x://ab.json")
	f.Fuzz(func(t *testing.T, template, uri string) {
		tmpl, ok := parseURITemplate(template)
		if !ok {
			return
		}
		tmpl.match(uri)
		// A template without expressions matches exactly itself.
		if !strings.ContainsAny(template, "{}") && tmpl.match(uri) != (uri == template) {
			t.Errorf("literal template %q matching %q = %v", template, uri, tmpl.match(uri))
		}
	})
}
