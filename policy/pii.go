package policy

import (
	"fmt"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/internal/detect"
	"github.com/mcpgate/mcpgate/internal/detect/pii"
)

// newPII makes the pii policy: personal data (e-mail addresses, phone
// numbers, payment cards, IBANs, public IP addresses, national identity
// numbers with a check character) in every string of requests and
// results, redacted to [REDACTED:<kind>], blocked or audited.
func newPII(spec config.Policy, _ Env) (Policy, error) {
	var known []string
	for _, k := range pii.Kinds() {
		known = append(known, k.Name)
	}
	if err := checkKinds(spec, known); err != nil {
		return nil, err
	}
	action, err := actionOf(spec, actionRedact, actionBlock, actionAudit)
	if err != nil {
		return nil, err
	}
	stages, err := stagesOn(spec)
	if err != nil {
		return nil, err
	}
	var det detect.Detector = builtOnFirstScan(func() detect.Detector { return pii.Default() })
	if spec.Kinds != nil || spec.AllIPs {
		if det, err = pii.New(pii.Options{Kinds: spec.Kinds, AllIPs: spec.AllIPs}); err != nil {
			return nil, fmt.Errorf("%s: %v", spec.Path, err)
		}
	}
	return &textScan{
		name: spec.Name, stages: stages, action: action, det: det,
		one: "item of personal data", many: "items of personal data", redactsBodies: true,
	}, nil
}
