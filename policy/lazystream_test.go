package policy

import (
	"slices"
	"testing"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/internal/detect"
)

// TestSecretsPolicyStreams: the secrets policy's detector, built on first
// use or from options, is a detect.Streamer, so that a big result's text
// can be scanned while it is read; its stream finds what its Scan finds.
func TestSecretsPolicyStreams(t *testing.T) {
	for _, spec := range []config.Policy{
		secretsSpec("redact", nil),
		secretsSpec("redact", func(s *config.Policy) { s.HighEntropy = true }),
	} {
		det := mustPolicy(t, newSecrets, spec).(*textScan).det
		streamer, ok := det.(detect.Streamer)
		if !ok {
			t.Fatalf("high entropy %v: the detector, a %T, is no detect.Streamer", spec.HighEntropy, det)
		}
		text := "token=AKIAZ2Q3W4E5R6T7Y2U3 and more"
		s := streamer.Stream()
		s.Advance(text[:10])
		if got, want := s.Finish(text, nil), det.Scan(text, nil); len(want) != 1 || !slices.Equal(got, want) {
			t.Errorf("high entropy %v: stream %v, scan %v", spec.HighEntropy, got, want)
		}
	}
}
