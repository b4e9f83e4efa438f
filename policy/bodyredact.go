package policy

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mcpgate/mcpgate/internal/detect"
	"github.com/mcpgate/mcpgate/internal/detect/pii"
	"github.com/mcpgate/mcpgate/internal/detect/secrets"
)

// BodyRedactor is a policy that can take what it looks for out of a
// message the audit trail is about to keep. The built-in secrets and pii
// policies are: a body is kept only after they have run on it, whatever
// their action for the client (an audit-mode policy lets a secret through
// to the server, but not into the audit file). A vendored policy that
// finds its own kind of sensitive value implements it too.
type BodyRedactor interface {
	// RedactBody returns msg with every value the policy looks for
	// replaced, or an error when msg cannot be read (the body is then not
	// kept). It must not change msg in place.
	RedactBody(msg json.RawMessage) (json.RawMessage, error)
}

// RedactBody prepares a request's params or a result for the audit trail:
// it takes out every secret and item of personal data the default
// detectors find, then whatever the chain's BodyRedactors look for (kinds
// and options beyond the defaults that the config turned on). Unlike the
// policies acting on traffic, it takes out the heuristic kinds too (a
// high-entropy string): in the audit file, a false positive costs a
// readable id; a miss costs a key. An error means the body is not JSON
// and must not be kept.
func (c Chain) RedactBody(msg json.RawMessage) (json.RawMessage, error) {
	if len(msg) == 0 {
		return msg, nil
	}
	var err error
	for _, r := range defaultBodyRedactors() {
		if msg, err = r.RedactBody(msg); err != nil {
			return nil, err
		}
	}
	for _, p := range c {
		if r, ok := p.(BodyRedactor); ok {
			if msg, err = r.RedactBody(msg); err != nil {
				return nil, err
			}
		}
	}
	return msg, nil
}

var defaultBodyRedactors = sync.OnceValue(func() []BodyRedactor {
	return []BodyRedactor{
		&textScan{det: builtOnFirstScan(func() detect.Detector { return secrets.Default() }), redactsBodies: true},
		&textScan{det: builtOnFirstScan(func() detect.Detector { return pii.Default() }), redactsBodies: true},
	}
})

// RedactBody takes out of msg everything the detector finds, when the
// policy is one that keeps such values out of the audit trail.
func (p *textScan) RedactBody(msg json.RawMessage) (json.RawMessage, error) {
	if !p.redactsBodies {
		return msg, nil
	}
	// Member names too: a map keyed by tokens carries them there. A
	// redacted name gets a number, so that names stay distinct.
	names := 0
	out, err := rewriteJSONStrings(msg, true, func(s string, name bool) (string, bool) {
		found := p.det.Scan(s, nil)
		if len(found) == 0 {
			return "", false
		}
		out := redact(s, found, nil)
		if name {
			names++
			out += fmt.Sprintf("#%d", names)
		}
		return out, true
	})
	return out, err
}
