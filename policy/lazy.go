package policy

import "github.com/mcpgate/mcpgate/internal/detect"

// builtOnFirstScan is a built-in detector with its default options, built
// the first time it scans (the detector packages build their defaults
// once, on first use). A policy that is configured but never runs (the
// default injection policy of a gateway nobody calls a tool through yet)
// then costs no compiling, and no memory held for it while idle. A
// detector with options of the config's is built when the config is read:
// an option it refuses is a config error.
type builtOnFirstScan func() detect.Detector

func (b builtOnFirstScan) Scan(text string, dst []detect.Finding) []detect.Finding {
	return b().Scan(text, dst)
}

// warmer is a policy whose detector is worth building before it is first
// needed.
type warmer interface {
	warm()
}

// Warm builds the detectors that the chain's List-stage policies need (the
// poisoning checker), so that the first list a client asks for does not
// wait for them: a gateway calls it as it starts its servers, whose start
// takes longer. Detectors of the other stages are still built when they
// first scan. It reports whether the chain has any such detector.
func (c Chain) Warm() bool {
	warmed := false
	for _, p := range c {
		if w, ok := p.(warmer); ok {
			w.warm()
			warmed = true
		}
	}
	return warmed
}
