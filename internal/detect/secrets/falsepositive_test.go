package secrets

import (
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// TestFalsePositives: nothing in testdata/false_positives.txtar is a
// secret (UUIDs, git SHAs, lockfile integrity hashes, placeholders and
// documentation examples, data URIs, base64 blobs, hex digests, public
// keys and certificates, code that names token prefixes), and the default
// detector must report none of it.
func TestFalsePositives(t *testing.T) {
	archive, err := txtar.ParseFile("testdata/false_positives.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(archive.Files) < 10 {
		t.Fatalf("only %d files in the false positive archive", len(archive.Files))
	}
	d := Default()
	for _, f := range archive.Files {
		text := string(f.Data)
		for _, finding := range d.Scan(text, nil) {
			t.Errorf("%s: reported %s at %d: %q", f.Name, finding.Kind, finding.Start, text[finding.Start:finding.End])
		}
	}
}
