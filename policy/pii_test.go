package policy

import (
	"reflect"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/config"
)

func piiSpec(action string, mod func(*config.Policy)) config.Policy {
	spec := config.Policy{Name: "pii", Path: "mcpServers.crm.policies[0]", Enabled: true, Action: action, On: []string{"requests", "results"}}
	if mod != nil {
		mod(&spec)
	}
	return spec
}

func promptGet(stage Stage, msg string) *Input {
	return &Input{Stage: stage, Session: "s1", Server: "crm", Method: "prompts/get", Kind: "prompt",
		Name: "crm__follow_up", UpstreamName: "follow_up", Message: []byte(msg)}
}

func TestPIIRedactsPromptMessages(t *testing.T) {
	p := mustPolicy(t, newPII, piiSpec("redact", nil))
	msg := `{"description":"Follow up with a customer","messages":[` +
		`{"role":"user","content":{"type":"text","text":"Write to jane.doe@example.org (card 4111 1111 1111 1111) and call +1 415 555 2671."}},` +
		`{"role":"assistant","content":{"type":"text","text":"The server at 10.0.0.5 is internal."}}]}`
	d := decide(t, p, promptGet(Result, msg), "jane.doe", "4111", "555")
	want := `{"description":"Follow up with a customer","messages":[` +
		`{"role":"user","content":{"type":"text","text":"Write to [REDACTED:email] (card [REDACTED:credit_card]) and call [REDACTED:phone]."}},` +
		`{"role":"assistant","content":{"type":"text","text":"The server at 10.0.0.5 is internal."}}]}`
	if d.Action != Modify || string(d.Message) != want {
		t.Fatalf("%v %q\n got %s\nwant %s", d.Action, d.Reason, d.Message, want)
	}
	if d.Reason != "redacted 3 items of personal data (credit_card, email, phone)" {
		t.Errorf("reason %q", d.Reason)
	}
}

func TestPIIBlocksArguments(t *testing.T) {
	p := mustPolicy(t, newPII, piiSpec("block", nil))
	d := decide(t, p, promptGet(Request, `{"name":"crm__follow_up","arguments":{"customer":"jane.doe@example.org"}}`), "jane.doe")
	if d.Action != Deny || d.Reason != "refused the request for prompt crm__follow_up: it holds 1 item of personal data (email)" {
		t.Errorf("%v %q", d.Action, d.Reason)
	}
}

func TestPIIOptions(t *testing.T) {
	text := toolResult("mail jane.doe@example.org from 10.0.0.5")
	p := mustPolicy(t, newPII, piiSpec("audit", func(s *config.Policy) { s.AllIPs = true }))
	d := decide(t, p, toolCall(Result, text))
	if d.Action != Audit || !reflect.DeepEqual(d.Findings, []Finding{{"email", 1}, {"ipv4", 1}}) {
		t.Errorf("all_ips: %+v", d)
	}
	p = mustPolicy(t, newPII, piiSpec("audit", func(s *config.Policy) { s.Kinds = []string{"ipv4"}; s.AllIPs = true }))
	d = decide(t, p, toolCall(Result, text))
	if !reflect.DeepEqual(d.Findings, []Finding{{"ipv4", 1}}) || d.Reason != "found 1 item of personal data (ipv4)" {
		t.Errorf("kinds: %+v", d)
	}
}

func TestPIIConfigErrors(t *testing.T) {
	_, err := newPII(piiSpec("redact", func(s *config.Policy) { s.Kinds = []string{"emial"} }), Env{})
	if err == nil || err.Error() != `mcpServers.crm.policies[0].kinds: unknown kind "emial"; did you mean "email"?` {
		t.Errorf("error %v", err)
	}
	_, err = newPII(piiSpec("redact", func(s *config.Policy) { s.Kinds = []string{"passport"} }), Env{})
	if err == nil || !strings.HasPrefix(err.Error(), `mcpServers.crm.policies[0].kinds: unknown kind "passport" (known: email, phone, credit_card`) {
		t.Errorf("error %v", err)
	}
}
