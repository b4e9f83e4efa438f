package policy

import (
	"fmt"
	"slices"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/internal/detect"
	"github.com/mcpgate/mcpgate/internal/detect/injection"
)

// newInjection makes the injection policy: prompt injection (instructions
// aimed at the model, fake chat-role markers, requests to hide things from
// the user, invisible or smuggled characters, encoded payloads) in every
// string of tool results, prompt messages and resource text. It audits by
// default and blocks on request; it never rewrites a message.
func newInjection(spec config.Policy, _ Env) (Policy, error) {
	var known, definitionsOnly []string
	for _, k := range injection.Kinds {
		if k.DefinitionsOnly {
			definitionsOnly = append(definitionsOnly, k.Name)
		} else {
			known = append(known, k.Name)
		}
	}
	for _, k := range spec.Kinds {
		if slices.Contains(definitionsOnly, k) {
			return nil, fmt.Errorf("%s.kinds: %q is looked for in tool and prompt definitions only: list it in the poisoning policy's kinds", spec.Path, k)
		}
	}
	if err := checkKinds(spec, known); err != nil {
		return nil, err
	}
	action, err := actionOf(spec, actionAudit, actionBlock)
	if err != nil {
		return nil, err
	}
	stages, err := stagesOn(spec)
	if err != nil {
		return nil, err
	}
	var det detect.Detector = builtOnFirstScan(func() detect.Detector { return injection.Default() })
	if spec.Kinds != nil {
		if det, err = injection.New(injection.Options{Disable: kindsLeftOut(spec.Kinds)}); err != nil {
			return nil, fmt.Errorf("%s: %v", spec.Path, err)
		}
	}
	return &textScan{
		name: spec.Name, stages: stages, action: action, det: det,
		one: "sign of prompt injection", many: "signs of prompt injection",
	}, nil
}

// kindsLeftOut turns a "kinds" list into the injection package's
// Options.Disable: every kind not listed, but phrase_flood, which is where
// the detector stops judging the phrases of the kinds that are listed:
// left out, a string padded with phrases hid whatever came after them.
func kindsLeftOut(kinds []string) []string {
	var out []string
	for _, k := range injection.Kinds {
		if k.Name != injection.KindPhraseFlood && !slices.Contains(kinds, k.Name) {
			out = append(out, k.Name)
		}
	}
	return out
}
