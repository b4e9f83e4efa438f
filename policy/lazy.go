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

// ScanAlone is the detector's ScanAlone if it has one (detect.Alone), else
// its Scan.
func (b builtOnFirstScan) ScanAlone(text string, dst []detect.Finding) []detect.Finding {
	if a, ok := b().(detect.Alone); ok {
		return a.ScanAlone(text, dst)
	}
	return b().Scan(text, dst)
}

func (b builtOnFirstScan) Scan(text string, dst []detect.Finding) []detect.Finding {
	return b().Scan(text, dst)
}

// builtOnFirstStream is builtOnFirstScan for a detector that can also scan
// a text while it arrives: the wrapper is a detect.Streamer, as the
// detector is (a builtOnFirstScan of it would hide that).
type builtOnFirstStream func() detect.Streamer

func (b builtOnFirstStream) Scan(text string, dst []detect.Finding) []detect.Finding {
	return b().Scan(text, dst)
}

func (b builtOnFirstStream) Stream() detect.Stream { return b().Stream() }
