package secrets

import (
	"encoding/base64"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/detect"
)

func kinds(fs []detect.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Kind)
	}
	return out
}

func TestGitHubChecksum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for range 100 {
		tok, _ := githubStyle("ghp_")(r)
		if !githubChecksum(tok) {
			t.Fatalf("valid token %s rejected", tok)
		}
		// Change one character of the random part: the CRC no longer fits.
		bad := []byte(tok)
		bad[10] = "ab"[0]
		if bad[10] == tok[10] {
			bad[10] = 'b'
		}
		if githubChecksum(string(bad)) {
			t.Errorf("token with a wrong checksum accepted: %s", bad)
		}
	}
	// GitHub's documentation example does not carry a valid checksum.
	if got := Default().Scan("token gho_16C7e42F292c6912E7710c838347Ae178B4a here", nil); len(got) != 0 {
		t.Errorf("documentation example reported: %v", got)
	}
}

func TestJWT(t *testing.T) {
	enc := base64.RawURLEncoding.EncodeToString
	sig := enc([]byte("0123456789abcdef0123456789abcdef"))
	payload := enc([]byte(`{"sub":"42","iat":1700000000}`))
	for _, tc := range []struct {
		name, token string
		want        bool
	}{
		{"signed", enc([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + payload + "." + sig, true},
		{"unsigned with alg none", enc([]byte(`{"alg":"none"}`)) + "." + payload + ".", true},
		{"no alg", enc([]byte(`{"typ":"JWT","kid":"abc"}`)) + "." + payload + "." + sig, false},
		{"empty signature with a real alg", enc([]byte(`{"alg":"RS256"}`)) + "." + payload + ".", false},
		{"payload not JSON", enc([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc([]byte("plain text payload")) + "." + sig, false},
		{"base64 JSON, one part", enc([]byte(`{"auths":{"ghcr.io":{"auth":"x"}}}`)), false},
		{"four parts", enc([]byte(`{"alg":"HS256"}`)) + "." + payload + "." + sig + "." + sig, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := `{"token": "` + tc.token + `"}`
			got := Default().Scan(text, nil)
			if tc.want != (len(got) == 1 && got[0].Kind == "jwt" && text[got[0].Start:got[0].End] == tc.token) {
				t.Errorf("Scan(%q) = %v, want found=%v", text, got, tc.want)
			}
		})
	}
}

func TestPrivateKeyForms(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	full := pemBlock(r, "OPENSSH PRIVATE KEY", "\n", false)
	escaped := pemBlock(r, "RSA PRIVATE KEY", `\n`, false)
	cut := pemBlock(r, "PRIVATE KEY", "\n", true)
	for _, tc := range []struct {
		name, text, key string
	}{
		{"newlines", "id_ed25519:\n" + full + "\n\n$ ", full},
		{"escaped newlines in an env value", `PRIVATE_KEY="` + escaped + `"`, escaped},
		{"cut short", "$ head -9 key.pem\n" + cut + "\n$ echo done", cut},
		{"cut short inside a quoted string", `{"text": "` + strings.ReplaceAll(cut, "\n", `\n`) + `"}`, strings.ReplaceAll(cut, "\n", `\n`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Default().Scan(tc.text, nil)
			at := strings.Index(tc.text, tc.key)
			if len(got) != 1 || got[0].Kind != "private_key" || got[0].Start != at || got[0].End != at+len(tc.key) {
				t.Errorf("Scan = %v, want one private_key at [%d,%d)", got, at, at+len(tc.key))
			}
		})
	}
}

func TestPlaceholders(t *testing.T) {
	for _, body := range []string{"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "XXXX-your-key-goes-here", "0000000000000000", "1234567890abcdef", "sk-12345678-zq", "abababababababababab", "EXAMPLEKEY0123456789"} {
		if !looksLikePlaceholder(body) {
			t.Errorf("%q not taken for a placeholder", body)
		}
	}
	r := rand.New(rand.NewPCG(3, 3))
	for range 1000 {
		if body := shape("{an:40}")(r); looksLikePlaceholder(body) {
			t.Errorf("random body %q taken for a placeholder", body)
		}
	}
	for _, pw := range []string{"", "${DB_PASSWORD}", "$PASS", "%s", "{{ .pw }}", "<password>", "****", "xxxxxx", "password", "Postgres", "changeme"} {
		if passwordIsReal(pw) {
			t.Errorf("password %q taken for a real one", pw)
		}
	}
	if !passwordIsReal("k9Fq2mWz7LpR") {
		t.Error("random password taken for a placeholder")
	}
}

// TestScanContract checks the detect.Detector promises on generated text
// full of overlapping candidates: findings ordered, in bounds, not
// overlapping; dst appended to, not replaced.
func TestScanContract(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	var b strings.Builder
	for range 300 {
		g := generators[r.IntN(len(generators))]
		text, _, _ := g.sample(r)
		b.WriteString(text)
		b.WriteString([]string{" ", "", "\n", "_", "-", "@", ":"}[r.IntN(7)])
	}
	text := b.String()
	prefix := []detect.Finding{{Kind: "earlier", Start: 0, End: 1}}
	got := Default().Scan(text, slices.Clone(prefix))
	if len(got) < 200 || got[0] != prefix[0] {
		t.Fatalf("Scan returned %d findings, first %v", len(got), got[0])
	}
	checkFindings(t, text, got[1:])
}

func checkFindings(t *testing.T, text string, fs []detect.Finding) {
	t.Helper()
	end := 0
	for _, f := range fs {
		if f.Start < end || f.End <= f.Start || f.End > len(text) || f.Kind == "" {
			t.Fatalf("finding %v out of order, empty or out of bounds (previous end %d, len %d)", f, end, len(text))
		}
		end = f.End
	}
}

func TestOptionsKinds(t *testing.T) {
	d, err := New(Options{Kinds: []string{"aws_access_key"}})
	if err != nil {
		t.Fatal(err)
	}
	text := "AKIAZ2Q3W4E5R6T7Y2U3 and SG." + strings.Repeat("aB3", 7) + "c." + strings.Repeat("xY7", 14) + "z"
	if got := kinds(d.Scan(text, nil)); !slices.Equal(got, []string{"aws_access_key"}) {
		t.Errorf("Kinds filter: got %v", got)
	}
	if got := kinds(Default().Scan(text, nil)); !slices.Equal(got, []string{"aws_access_key", "sendgrid_key"}) {
		t.Errorf("default: got %v", got)
	}
	if _, err := New(Options{Kinds: []string{"aws_key"}}); err == nil || !strings.Contains(err.Error(), `"aws_key"`) {
		t.Errorf("unknown kind: err = %v, want one naming it", err)
	}
}

// TestHighEntropy: off by default; when on, random strings no rule names
// are reported as high_entropy_string, and hashes, UUIDs, lockfile
// integrity values and data URIs are still not.
func TestHighEntropy(t *testing.T) {
	secret := "Zq8Rt2LmX4vNp7Ks1Wd9Hy3Bf6Jc0Ge5"
	text := `{"session_secret": "` + secret + `"}`
	if got := Default().Scan(text, nil); len(got) != 0 {
		t.Fatalf("default detector reported %v; high-entropy detection must be opt-in", got)
	}
	d, err := New(Options{HighEntropy: true})
	if err != nil {
		t.Fatal(err)
	}
	got := d.Scan(text, nil)
	if len(got) != 1 || got[0].Kind != KindHighEntropy || text[got[0].Start:got[0].End] != secret {
		t.Errorf("high entropy: got %v", got)
	}
	// A rule's finding keeps its kind when the heuristic covers it too.
	r := rand.New(rand.NewPCG(5, 5))
	tok, _ := githubStyle("ghp_")(r)
	if got := kinds(d.Scan("GITHUB_TOKEN="+tok, nil)); !slices.Equal(got, []string{"github_token"}) {
		t.Errorf("rule and heuristic: got %v", got)
	}
	for _, benign := range []string{
		"commit 3f786850e387550fdab836ed7e6dc881de23001b",
		"id 0c8a7b3e-5d2f-4e1a-9b6c-7d8e9f0a1b2c",
		`"integrity": "sha512-Rk0ZGmBhbGJvY2sTaGVsbG8xMjM0NTY3ODkwYWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXo="`,
		`<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABgAAAAYCAIAAABvFaqv">`,
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  empty.txt",
		"internal/detect/secrets/testdata/false_positives.txtar",
	} {
		if got := d.Scan(benign, nil); len(got) != 0 {
			t.Errorf("high entropy reported %v in %q", got, benign)
		}
	}
}

// TestNoAllocationWithoutKeyword: a text with no keyword costs one pass of
// the prefilter: no regexp runs and nothing is allocated.
func TestNoAllocationWithoutKeyword(t *testing.T) {
	text := strings.Repeat("The build finished in 42 seconds; 17 tests passed. ", 200)
	d := Default()
	if n := testing.AllocsPerRun(20, func() { d.Scan(text, nil) }); n != 0 {
		t.Errorf("Scan of a keyword-free text allocated %v times", n)
	}
}

// TestNewCompilesRulesWhenFirstNeeded: building the detector does not
// compile every rule's regexp (about 9 MB of allocations for the default
// table); a rule is compiled when a keyword of it first asks (the limit
// is generous).
func TestNewCompilesRulesWhenFirstNeeded(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d, err := New(Options{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 3<<20 {
		t.Errorf("New allocated %d bytes, want at most %d", got, 3<<20)
	}
	if found := d.Scan("token ghp_"+strings.Repeat("a", 36), nil); len(found) != 0 {
		t.Errorf("a token with a bad checksum: %v", found)
	}
}
