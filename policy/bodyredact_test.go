package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/config"
)

// TestRedactBody: a body kept by the audit trail loses every secret and
// item of personal data, whatever the chain says (audit-mode policies,
// none at all), the heuristic kinds the chain turned on, and what a
// vendored BodyRedactor looks for; the rest is kept byte for byte.
func TestRedactBody(t *testing.T) {
	random := "Zx81Qm2Lw7Rt4Kp9Vb3Nc6Hy5Jd0Fg"
	body := json.RawMessage(toolResult("key " + awsKey + " for ann@example.org, cookie " + random + ", ticket T-4711"))
	auditOnly := mustPolicy(t, newSecrets, secretsSpec("audit", func(s *config.Policy) { s.HighEntropy = true }))
	cases := []struct {
		name  string
		chain Chain
		gone  []string
		kept  []string
	}{
		{"no policies", nil, []string{awsKey, "ann@example.org"}, []string{random, "T-4711"}},
		{"audit-only secrets with high_entropy", Chain{auditOnly}, []string{awsKey, "ann@example.org", random}, []string{"T-4711"}},
		{"a vendored redactor", Chain{ticketRedactor{}}, []string{awsKey, "ann@example.org", "T-4711"}, []string{random}},
	}
	for _, c := range cases {
		out, err := c.chain.RedactBody(body)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, s := range c.gone {
			if bytes.Contains(out, []byte(s)) {
				t.Errorf("%s: %q kept in %s", c.name, s, out)
			}
		}
		for _, s := range c.kept {
			if !bytes.Contains(out, []byte(s)) {
				t.Errorf("%s: %q lost from %s", c.name, s, out)
			}
		}
		if !json.Valid(out) || !bytes.Contains(out, []byte(`[REDACTED:aws_access_key]`)) {
			t.Errorf("%s: %s", c.name, out)
		}
	}
	clean := json.RawMessage(`{"content":[{"type":"text","text":"nothing here"}]}`)
	if out, _ := Chain(nil).RedactBody(clean); string(out) != string(clean) {
		t.Errorf("a clean body changed: %s", out)
	}
}

// ticketRedactor is what a vendoring program writes: a policy of its own
// whose values stay out of the audit trail.
type ticketRedactor struct{}

func (ticketRedactor) Name() string                            { return "tickets" }
func (ticketRedactor) Stages() []Stage                         { return []Stage{Result} }
func (ticketRedactor) Decide(context.Context, *Input) Decision { return Decision{} }
func (ticketRedactor) RedactBody(msg json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(strings.ReplaceAll(string(msg), "T-4711", "[REDACTED:ticket]")), nil
}

// A secret used as a member name (a map keyed by tokens) is taken out of
// the body too, and names that were redacted stay distinct.
func TestRedactBodyMemberNames(t *testing.T) {
	body := json.RawMessage(`{"tokens":{"` + awsKey + `":"ci","AKIAQ7W3E5R2T6Y4U5I2":"cd"},"note":"plain"}`)
	out, err := Chain(nil).RedactBody(body)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte(awsKey)) || bytes.Contains(out, []byte("AKIAQ7W3E5R2T6Y4U5I2")) {
		t.Errorf("a secret member name kept: %s", out)
	}
	var m struct{ Tokens map[string]string }
	if err := json.Unmarshal(out, &m); err != nil || len(m.Tokens) != 2 {
		t.Errorf("redacted names not distinct, or the body broken: %s (%v)", out, err)
	}
	if !bytes.Contains(out, []byte(`"note":"plain"`)) {
		t.Errorf("the rest changed: %s", out)
	}
}
