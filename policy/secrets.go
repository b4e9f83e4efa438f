package policy

import (
	"fmt"
	"slices"
	"sync"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/internal/detect"
	"github.com/mcpgate/mcpgate/internal/detect/secrets"
)

// secretKinds are the names of the secrets detector's kinds and those only
// recorded, shared by every secrets policy (read only): a gateway compiles
// its policies once per server, and secrets.Kinds describes every rule.
var secretKinds = sync.OnceValues(func() (known []string, recordOnly map[string]bool) {
	infos := secrets.Kinds()
	known = make([]string, len(infos))
	recordOnly = map[string]bool{}
	for i, k := range infos {
		known[i] = k.Name
		if k.AuditOnly {
			recordOnly[k.Name] = true
		}
	}
	return known, recordOnly
})

// newSecrets makes the secrets policy: credentials (provider tokens and
// keys, private keys, JWTs, passwords in URLs and connection strings) in
// every string of requests and results, redacted to [REDACTED:<kind>],
// blocked or audited. The high-entropy heuristic ("high_entropy": true) is
// only ever recorded: it cannot tell a key from an id, so it never redacts
// or blocks, whatever the action.
func newSecrets(spec config.Policy, _ Env) (Policy, error) {
	known, recordOnly := secretKinds()
	if err := checkKinds(spec, known); err != nil {
		return nil, err
	}
	if slices.Contains(spec.Kinds, secrets.KindHighEntropy) && !spec.HighEntropy {
		return nil, fmt.Errorf(`%s.kinds: %q is looked for only with "high_entropy": true`, spec.Path, secrets.KindHighEntropy)
	}
	action, err := actionOf(spec, actionRedact, actionBlock, actionAudit)
	if err != nil {
		return nil, err
	}
	stages, err := stagesOn(spec)
	if err != nil {
		return nil, err
	}
	var det detect.Detector = builtOnFirstStream(func() detect.Streamer { return secrets.Default() })
	if spec.Kinds != nil || spec.HighEntropy {
		if det, err = secrets.New(secrets.Options{Kinds: spec.Kinds, HighEntropy: spec.HighEntropy}); err != nil {
			return nil, fmt.Errorf("%s: %v", spec.Path, err)
		}
	}
	return &textScan{
		name: spec.Name, stages: stages, action: action, det: det,
		recordOnly: recordOnly, one: "secret", many: "secrets", redactsBodies: true,
	}, nil
}
