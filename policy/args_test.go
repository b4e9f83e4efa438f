package policy

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/config"
)

// ruleLoadPolicy reads one top-level policy entry the way mcpgate's config
// does, so the tests see what the constructors really get.
func ruleLoadPolicy(t testing.TB, entry string) config.Policy {
	t.Helper()
	cfg, err := config.Load([]byte(`{"mcpServers": {"db": {"command": "db-server"}}, "policies": [`+entry+`]}`), "mcpgate.json", os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Policies[0]
}

func mustArgs(t testing.TB, entry string) Policy {
	t.Helper()
	p, err := newArgs(ruleLoadPolicy(t, entry), Env{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const argsRules = `{"policy": "args", "rules": [
	{"tool": "run_query", "arg": "sql", "deny": "(?i)\\b(drop|truncate)\\b", "max_length": 40},
	{"tool": "fetch*", "arg": "url", "allow": "^https://"},
	{"tool": "*", "arg": "command", "deny": "rm\\s+-rf"},
	{"tool": "set_limit", "arg": "limit", "allow": "^[0-9]{1,3}$"}
]}`

func TestArgs(t *testing.T) {
	p := mustArgs(t, argsRules)
	tests := []struct {
		name, tool, args string
		kind             string // "": allowed
		rule             string
	}{
		{"plain query", "run_query", `{"sql":"select * from users"}`, "", ""},
		{"word inside another", "run_query", `{"sql":"select dropped from t"}`, "", ""},
		{"no rule for the tool", "other", `{"sql":"drop table users"}`, "", ""},
		{"missing argument", "run_query", `{"database":"main"}`, "", ""},
		{"null argument", "run_query", `{"sql":null}`, "", ""},
		{"no arguments", "run_query", `null`, "", ""},
		{"allowed URL", "fetch_page", `{"url":"https://example.com"}`, "", ""},
		{"exactly the limit in characters", "run_query", `{"sql":"` + strings.Repeat("é", 40) + `"}`, "", ""},
		{"number within allow", "set_limit", `{"limit":100}`, "", ""},

		{"denied word", "run_query", `{"sql":"DROP TABLE users"}`, argKindDenied, "policies[0].rules[0]"},
		{"denied word, escaped", "run_query", `{"sql":"\u0044ROP TABLE users"}`, argKindDenied, "policies[0].rules[0]"},
		{"key in another case", "run_query", `{"SQL":"drop table users"}`, argKindDenied, "policies[0].rules[0]"},
		{"too long", "run_query", `{"sql":"` + strings.Repeat("é", 41) + `"}`, argKindTooLong, "policies[0].rules[0]"},
		{"not allowed URL", "fetch_page", `{"url":"file:///etc/passwd"}`, argKindNotAllowed, "policies[0].rules[1]"},
		{"glob over every tool", "shell", `{"command":"rm  -rf /"}`, argKindDenied, "policies[0].rules[2]"},
		{"array hiding a newline", "shell", `{"command":["rm\n-rf","/"]}`, argKindDenied, "policies[0].rules[2]"},
		{"object hiding an escape", "shell", `{"command":{"argv":"rm\t-rf /"}}`, argKindDenied, "policies[0].rules[2]"},
		{"array against allow", "fetch_page", `{"url":["https://a"]}`, argKindNotAllowed, "policies[0].rules[1]"},
		{"number against allow", "set_limit", `{"limit":1e9}`, argKindNotAllowed, "policies[0].rules[3]"},
		{"boolean against allow", "set_limit", `{"limit":true}`, argKindNotAllowed, "policies[0].rules[3]"},
		{"duplicate key", "run_query", `{"sql":"select 1","sql":"drop table users"}`, argKindInvalid, ""},
		{"arguments not an object", "run_query", `["drop table users"]`, argKindInvalid, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ruleToolCall(tt.tool, tt.args)
			d := p.Decide(context.Background(), in)
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
				t.Errorf("findings %+v, want one %q", d.Findings, tt.kind)
			}
			if tt.rule != "" && (!strings.Contains(d.Reason, "(rule "+tt.rule+")") || !strings.Contains(d.Reason, `of tool "fs__`+tt.tool+`"`)) {
				t.Errorf("reason %q does not name the tool and rule %s", d.Reason, tt.rule)
			}
			for _, leak := range []string{"drop", "DROP", "passwd", "rm", "https", "(?i)"} {
				if strings.Contains(d.Reason, leak) {
					t.Errorf("reason %q repeats %q", d.Reason, leak)
				}
			}
		})
	}
}

func TestArgsReasons(t *testing.T) {
	p := mustArgs(t, argsRules)
	tests := []struct{ args, want string }{
		{`{"sql":"drop table t"}`, `argument "sql" of tool "fs__run_query" matches a pattern its rule denies (rule policies[0].rules[0])`},
		{`{"sql":"` + strings.Repeat("x", 50) + `"}`, `argument "sql" of tool "fs__run_query" is 50 characters long; at most 40 are allowed (rule policies[0].rules[0])`},
	}
	for _, tt := range tests {
		if d := p.Decide(context.Background(), ruleToolCall("run_query", tt.args)); d.Reason != tt.want {
			t.Errorf("reason %q, want %q", d.Reason, tt.want)
		}
	}
}

func TestArgsAuditRecordsEveryBrokenRule(t *testing.T) {
	p := mustArgs(t, `{"policy": "args", "action": "audit", "rules": [
		{"tool": "*", "arg": "sql", "deny": "(?i)drop", "max_length": 10},
		{"tool": "*", "arg": "sql", "allow": "^select"},
		{"tool": "*", "arg": "url", "allow": "^https://"}
	]}`)
	d := p.Decide(context.Background(), ruleToolCall("q", `{"sql":"drop table users","url":"http://x"}`))
	if d.Action != Audit {
		t.Fatalf("got %v, want audit", d.Action)
	}
	got := map[string]int{}
	for _, f := range d.Findings {
		got[f.Kind] = f.Count
	}
	if len(got) != 2 || got[argKindTooLong] != 1 || got[argKindNotAllowed] != 2 {
		t.Errorf("findings %v, want too_long 1 (checked before deny) and not_allowed 2", got)
	}
	if !strings.HasSuffix(d.Reason, "(and 2 more)") {
		t.Errorf("reason %q does not count the rest", d.Reason)
	}
}

func TestArgsOnlyToolCallRequests(t *testing.T) {
	p := mustArgs(t, argsRules)
	in := ruleToolCall("run_query", `{"sql":"drop table users"}`)
	in.Stage = Result
	if d := p.Decide(context.Background(), in); d.Action != Allow {
		t.Errorf("result stage: got %v", d.Action)
	}
	in = ruleToolCall("run_query", `{"sql":"drop table users"}`)
	in.Method, in.Kind = "prompts/get", "prompt"
	if d := p.Decide(context.Background(), in); d.Action != Allow {
		t.Errorf("prompts/get: got %v", d.Action)
	}
}

func TestArgsConfigErrors(t *testing.T) {
	spec := ruleLoadPolicy(t, argsRules)
	spec.Rules = nil
	if _, err := newArgs(spec, Env{}); err == nil || !strings.HasPrefix(err.Error(), "policies[0].rules: empty") {
		t.Errorf("no rules: %v", err)
	}
	spec = ruleLoadPolicy(t, argsRules)
	spec.Rules[0].Tool = "[bad"
	if _, err := newArgs(spec, Env{}); err == nil || !strings.HasPrefix(err.Error(), `policies[0].rules[0].tool: "[bad" is not a valid glob`) {
		t.Errorf("bad glob: %v", err)
	}
}

func FuzzArgsValue(f *testing.F) {
	for _, s := range []string{`"drop"`, `["rm\n-rf"]`, `{"a":1,"a":2}`, `1e400`, `[[[["x"]]]]`, `"\ud800"`, `{"\u0044ROP":true}`} {
		f.Add(s)
	}
	p := mustArgs(f, argsRules)
	f.Fuzz(func(t *testing.T, value string) {
		d := p.Decide(context.Background(), ruleToolCall("run_query", `{"sql":`+value+`}`))
		if d.Action == Deny && len(d.Findings) != 1 {
			t.Fatalf("deny with findings %+v", d.Findings)
		}
		if d.Action == Allow {
			// An allowed string argument has no denied word in it.
			if text, _, err := argJSONText([]byte(value)); err == nil && strings.HasPrefix(value, `"`) && strings.Contains(strings.ToLower(text), " drop ") {
				t.Fatalf("%s allowed", value)
			}
		}
	})
}

func BenchmarkArgs(b *testing.B) {
	p := mustArgs(b, `{"policy": "args", "rules": [
		{"tool": "run_query", "arg": "sql", "deny": "(?i)\\b(drop|truncate)\\b", "max_length": 4000},
		{"tool": "fetch*", "arg": "url", "allow": "^https://"}
	]}`)
	for _, bc := range []struct{ name, tool string }{{"ruled", "run_query"}, {"unruled", "list_tables"}} {
		in := ruleToolCall(bc.tool, `{"sql":"select id, name from users where id = 42","database":"main"}`)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if d := p.Decide(context.Background(), in); d.Action != Allow {
					b.Fatal(d.Reason)
				}
			}
		})
	}
}
