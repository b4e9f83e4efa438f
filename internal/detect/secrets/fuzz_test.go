package secrets

import (
	"math/rand/v2"
	"testing"
)

// FuzzScan: whatever the text, Scan does not panic and keeps the contract:
// findings in bounds, ordered, not overlapping.
func FuzzScan(f *testing.F) {
	r := rand.New(rand.NewPCG(6, 6))
	for _, g := range generators {
		text, _, _ := g.sample(r)
		f.Add(text)
	}
	f.Add("-----BEGIN RSA PRIVATE KEY-----\\nMIIE\\n-----END RSA PRIVATE KEY-----")
	f.Add("eyJ.eyJ.")
	f.Add("postgres://:@")
	d, err := New(Options{HighEntropy: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkFindings(t, text, Default().Scan(text, nil))
		checkFindings(t, text, d.Scan(text, nil))
	})
}
