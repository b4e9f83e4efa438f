package policy

import (
	"context"
	"hash/crc32"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/config"
)

// Credentials the secrets detector reports: an AWS access key id, a GitHub
// token with a valid checksum, a private key block.
var (
	awsKey      = "AKIAZ2Q3W4E5R6T7Y2U3"
	githubToken = githubStyleToken("ghp_", "q4Zr8TmN2vLx6KpW9sYb3HcJ7fDg1A")
	privateKey  = "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat("MIIEowIBAAKCAQEAu7Qm4n2R9xZ0c3Vb5J8kLpT1yWq6sE+H/fG0aN2dC7vXr9KmB4o=\n", 3) + "-----END RSA PRIVATE KEY-----"
)

// githubStyleToken appends to prefix+body (30 base62 characters) the CRC32
// checksum GitHub tokens carry.
func githubStyleToken(prefix, body string) string {
	const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	v := crc32.ChecksumIEEE([]byte(body))
	var sum [6]byte
	for i := len(sum) - 1; i >= 0; i-- {
		sum[i] = digits[v%62]
		v /= 62
	}
	return prefix + body + string(sum[:])
}

func secretsSpec(action string, mod func(*config.Policy)) config.Policy {
	spec := config.Policy{Name: "secrets", Path: "policies[0]", Enabled: true, Action: action, On: []string{"requests", "results"}}
	if mod != nil {
		mod(&spec)
	}
	return spec
}

func mustPolicy(t *testing.T, make func(config.Policy, Env) (Policy, error), spec config.Policy) Policy {
	t.Helper()
	p, err := make(spec, Env{})
	if err != nil {
		t.Fatalf("%+v: %v", spec, err)
	}
	return p
}

func toolCall(stage Stage, msg string) *Input {
	return &Input{Stage: stage, Session: "s1", Server: "fs", Method: "tools/call", Kind: "tool",
		Name: "fs__read_file", UpstreamName: "read_file", Message: []byte(msg)}
}

// decide runs p on in and checks what every decision must keep: no secret
// value in the reason, Findings only with a decision that records them.
func decide(t *testing.T, p Policy, in *Input, never ...string) Decision {
	t.Helper()
	orig := slices.Clone(in.Message)
	d := p.Decide(context.Background(), in)
	if !slices.Equal(in.Message, orig) {
		t.Fatalf("Decide changed the input's message in place")
	}
	for _, v := range never {
		if strings.Contains(d.Reason, v) {
			t.Errorf("the reason %q repeats a matched value", d.Reason)
		}
	}
	if d.Action != Modify && d.Message != nil {
		t.Errorf("%v decision with a message", d.Action)
	}
	return d
}

func TestSecretsRedactsEveryStringOfAResult(t *testing.T) {
	p := mustPolicy(t, newSecrets, secretsSpec("redact", nil))
	// text content, structuredContent and an embedded resource's text, as
	// written by a server (escapes and spacing of its own).
	msg := `{"content": [` +
		`{"type": "text", "text": "Cloned with ` + githubToken + `\nDone."},` +
		`{"type": "resource", "resource": {"uri": "file:///home/u/.ssh/id_rsa", "mimeType": "text/plain", "text": ` + jsonQuote(privateKey) + `}}` +
		`], "structuredContent": {"env": {"AWS_ACCESS_KEY_ID": "` + awsKey + `", "REGION": "eu-west-1"}, "caf\u00e9": "caf\u00e9"}, "isError": false}`
	d := decide(t, p, toolCall(Result, msg), githubToken, awsKey, "MIIEow")
	want := `{"content": [` +
		`{"type": "text", "text": "Cloned with [REDACTED:github_token]\nDone."},` +
		`{"type": "resource", "resource": {"uri": "file:///home/u/.ssh/id_rsa", "mimeType": "text/plain", "text": "[REDACTED:private_key]"}}` +
		`], "structuredContent": {"env": {"AWS_ACCESS_KEY_ID": "[REDACTED:aws_access_key]", "REGION": "eu-west-1"}, "caf\u00e9": "caf\u00e9"}, "isError": false}`
	if d.Action != Modify || string(d.Message) != want {
		t.Fatalf("%v %q\n got %s\nwant %s", d.Action, d.Reason, d.Message, want)
	}
	if d.Reason != "redacted 3 secrets (aws_access_key, github_token, private_key)" {
		t.Errorf("reason %q", d.Reason)
	}
	wantFindings := []Finding{{"aws_access_key", 1}, {"github_token", 1}, {"private_key", 1}}
	if !reflect.DeepEqual(d.Findings, wantFindings) {
		t.Errorf("findings %v, want %v", d.Findings, wantFindings)
	}
}

func TestSecretsRedactsRequestArguments(t *testing.T) {
	p := mustPolicy(t, newSecrets, secretsSpec("", nil))
	msg := `{"name":"http__post","arguments":{"url":"https://api.example.com/v1/items","headers":{"X-Note":"two keys: ` + awsKey + ` and AKIA4HQ7WMZ2KX3PLT6V"},"count":3},"_meta":{"progressToken":7}}`
	d := decide(t, p, toolCall(Request, msg), awsKey)
	want := `{"name":"http__post","arguments":{"url":"https://api.example.com/v1/items","headers":{"X-Note":"two keys: [REDACTED:aws_access_key] and [REDACTED:aws_access_key]"},"count":3},"_meta":{"progressToken":7}}`
	if d.Action != Modify || string(d.Message) != want {
		t.Fatalf("%v %q\n got %s\nwant %s", d.Action, d.Reason, d.Message, want)
	}
	if d.Reason != "redacted 2 secrets (aws_access_key)" || !reflect.DeepEqual(d.Findings, []Finding{{"aws_access_key", 2}}) {
		t.Errorf("reason %q, findings %v", d.Reason, d.Findings)
	}
}

func TestSecretsNothingFound(t *testing.T) {
	for _, action := range []string{"redact", "block", "audit"} {
		p := mustPolicy(t, newSecrets, secretsSpec(action, nil))
		for _, msg := range []string{toolResult4K(), structuredResult4K(), `{}`, `null`, ``} {
			if d := decide(t, p, toolCall(Result, msg)); !reflect.DeepEqual(d, Decision{}) {
				t.Errorf("%s on ordinary output: %+v", action, d)
			}
		}
	}
}

func TestSecretsBlock(t *testing.T) {
	p := mustPolicy(t, newSecrets, secretsSpec("block", nil))
	d := decide(t, p, toolCall(Result, toolResult("export GITHUB_TOKEN="+githubToken)), githubToken)
	if d.Action != Deny || d.Reason != "withheld the result of tool fs__read_file: it holds 1 secret (github_token)" {
		t.Errorf("%v %q", d.Action, d.Reason)
	}
	d = decide(t, p, toolCall(Request, `{"name":"fs__write_file","arguments":{"content":"`+awsKey+`"}}`), awsKey)
	if d.Action != Deny || d.Reason != "refused the call to tool fs__read_file: it holds 1 secret (aws_access_key)" {
		t.Errorf("%v %q", d.Action, d.Reason)
	}
	// A resource is named by its method only: its URI may hold the secret.
	uri := "https://deploy:" + githubToken + "@git.example.com/repo.git"
	in := &Input{Stage: Request, Server: "web", Method: "resources/read", Kind: "resource", Name: "web__" + uri, Message: []byte(`{"uri":` + jsonQuote(uri) + `}`)}
	d = decide(t, p, in, githubToken, "deploy:")
	if d.Action != Deny || !strings.HasPrefix(d.Reason, "refused the resources/read request: it holds ") {
		t.Errorf("%v %q", d.Action, d.Reason)
	}
}

func TestSecretsAudit(t *testing.T) {
	p := mustPolicy(t, newSecrets, secretsSpec("audit", nil))
	d := decide(t, p, toolCall(Result, toolResult(awsKey+" "+githubToken)), awsKey, githubToken)
	if d.Action != Audit || d.Reason != "found 2 secrets (aws_access_key, github_token)" || len(d.Findings) != 2 {
		t.Errorf("%+v", d)
	}
}

// TestSecretsHighEntropyIsAuditOnly: the heuristic records, never redacts
// or blocks, whatever the action.
func TestSecretsHighEntropyIsAuditOnly(t *testing.T) {
	random := "Zx81Qm2Lw7Rt4Kp9Vb3Nc6Hy5Jd0Fg"
	for _, action := range []string{"redact", "block"} {
		p := mustPolicy(t, newSecrets, secretsSpec(action, func(s *config.Policy) { s.HighEntropy = true }))
		d := decide(t, p, toolCall(Result, toolResult("session cookie "+random)), random)
		if d.Action != Audit || d.Reason != "found 1 secret (high_entropy_string); audit only" {
			t.Errorf("%s: %v %q", action, d.Action, d.Reason)
		}
		d = decide(t, p, toolCall(Result, toolResult(random+" and "+awsKey)), random, awsKey)
		switch {
		case action == "block" && d.Action != Deny:
			t.Errorf("block with a real key too: %v %q", d.Action, d.Reason)
		case action == "redact" && (d.Action != Modify || !strings.Contains(string(d.Message), random) ||
			d.Reason != "redacted 1 secret (aws_access_key); found 1 secret (high_entropy_string), audit only"):
			t.Errorf("redact with a real key too: %v %q %s", d.Action, d.Reason, d.Message)
		}
	}
	p := mustPolicy(t, newSecrets, secretsSpec("redact", nil))
	if d := decide(t, p, toolCall(Result, toolResult("session cookie "+random))); d.Action != Allow {
		t.Errorf("high_entropy off, yet %+v", d)
	}
}

func TestSecretsKinds(t *testing.T) {
	p := mustPolicy(t, newSecrets, secretsSpec("redact", func(s *config.Policy) { s.Kinds = []string{"github_token"} }))
	d := decide(t, p, toolCall(Result, toolResult(awsKey+" "+githubToken)))
	if d.Action != Modify || d.Reason != "redacted 1 secret (github_token)" || !strings.Contains(string(d.Message), awsKey) {
		t.Errorf("%v %q %s", d.Action, d.Reason, d.Message)
	}
}

func TestSecretsStages(t *testing.T) {
	p := mustPolicy(t, newSecrets, secretsSpec("redact", nil))
	if got := p.Stages(); !slices.Equal(got, []Stage{Request, Result}) {
		t.Errorf("stages %v", got)
	}
	p = mustPolicy(t, newSecrets, secretsSpec("redact", func(s *config.Policy) { s.On = []string{"results"} }))
	if got := p.Stages(); !slices.Equal(got, []Stage{Result}) {
		t.Errorf("stages %v", got)
	}
	if p.Name() != "secrets" {
		t.Errorf("name %q", p.Name())
	}
}

func TestSecretsConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		mod  func(*config.Policy)
		want string
	}{
		{func(s *config.Policy) { s.Kinds = []string{"github_tokn"} }, `policies[0].kinds: unknown kind "github_tokn"; did you mean "github_token"?`},
		{func(s *config.Policy) { s.Kinds = []string{"nothing_like_it"} }, `policies[0].kinds: unknown kind "nothing_like_it" (the secrets policy's README section lists its`},
		{func(s *config.Policy) { s.Kinds = []string{} }, `policies[0].kinds: empty`},
		{func(s *config.Policy) { s.Kinds = []string{"high_entropy_string"} }, `policies[0].kinds: "high_entropy_string" is looked for only with "high_entropy": true`},
		{func(s *config.Policy) { s.On = []string{} }, `policies[0].on: empty`},
		{func(s *config.Policy) { s.On = []string{"lists"} }, `policies[0].on: secrets does not act on "lists"`},
		{func(s *config.Policy) { s.Action = "drop" }, `policies[0].action: secrets takes redact, block, audit, not "drop"`},
	} {
		_, err := newSecrets(secretsSpec("redact", tc.mod), Env{})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("error %v, want %s…", err, tc.want)
		}
	}
	if _, err := newSecrets(secretsSpec("redact", func(s *config.Policy) {
		s.HighEntropy = true
		s.Kinds = []string{"high_entropy_string", "aws_access_key"}
	}), Env{}); err != nil {
		t.Error(err)
	}
}

// TestSecretsInvalidJSON: a message whose strings cannot be found cannot
// be checked: only an audit policy lets it through.
func TestSecretsInvalidJSON(t *testing.T) {
	bad := `{"content":[{"type":"text","text":"` + awsKey
	for action, want := range map[string]Action{"redact": Deny, "block": Deny, "audit": Audit} {
		p := mustPolicy(t, newSecrets, secretsSpec(action, nil))
		d := decide(t, p, toolCall(Result, bad), awsKey)
		if d.Action != want || !strings.Contains(d.Reason, "not valid JSON") {
			t.Errorf("%s: %v %q", action, d.Action, d.Reason)
		}
	}
}
