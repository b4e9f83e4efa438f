package secrets

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/detect"
)

const toolResultSize = 64 << 10

var benchCode = `func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	token := r.Header.Get("Authorization")
	if !strings.HasPrefix(token, "Bearer ") {
		http.Error(w, "missing bearer token", http.StatusUnauthorized)
		return
	}
	part, err := s.store.Put(ctx, path.Join("uploads", r.URL.Query().Get("name")), r.Body)
	if err != nil {
		s.log.Error("upload failed", "err", err, "task", "disk-usage", "path", r.URL.Path)
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"etag": part.ETag, "size": part.Size})
}
`

var benchLogs = `2025-03-14T09:26:%02d.%03dZ INFO  http: GET /api/v1/items?page=%d&per_page=50 status=200 latency=%dms request_id=%08x-7b3d-4c8e-9f0a-1b2c3d4e5f60
2025-03-14T09:26:%02d.%03dZ WARN  retrying https://storage.googleapis.com/bucket-%d/objects attempt=%d backoff=250ms
2025-03-14T09:26:%02d.%03dZ DEBUG cache miss key=user:%d:profile ttl=300s locale=en-us
`

var benchProse = `The pipeline builds the project, runs the unit tests and the end-to-end suite, then publishes the
artifacts. When a task fails, the runner keeps its logs for seven days; see the path printed above.
Patterns in the config are matched against the file names relative to the repository root, and the
skip list takes precedence over the include list. Ask the on-call engineer before re-running a deploy.
`

var benchManifest = `{"name": "web-%d", "version": "1.%d.0", "scripts": {"build": "vite build", "test": "vitest run"},
 "dependencies": {"react": "^18.3.1", "zod": "^3.23.8", "@tanstack/react-query": "^5.51.1"},
 "repository": "https://github.com/acme/web-%d.git", "commit": "%040x"}
`

// benchToolResult builds a realistic ~64 KiB MCP tool result: code, logs,
// prose and manifests in a JSON text content, as a file-reading or shell
// tool returns them; secret, when set, goes in the middle.
func benchToolResult(secret string) string {
	r := rand.New(rand.NewPCG(11, 12))
	var b strings.Builder
	for i := 0; b.Len() < toolResultSize; i++ {
		switch i % 4 {
		case 0:
			b.WriteString(benchCode)
		case 1:
			for j := range 6 {
				fmt.Fprintf(&b, benchLogs, j, r.IntN(1000), j, r.IntN(90), r.Uint32(), j, r.IntN(1000), r.IntN(9), j, j, r.IntN(1000), r.IntN(99999))
			}
		case 2:
			b.WriteString(benchProse)
		case 3:
			fmt.Fprintf(&b, benchManifest, i, i, i, r.Uint64())
		}
		if secret != "" && i == 40 {
			b.WriteString("\nGITHUB_TOKEN=" + secret + "\n")
		}
	}
	text := b.String()
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{
		"content": []any{map[string]any{"type": "text", "text": text}}, "isError": false}})
	return string(msg)
}

func benchmarkScan(b *testing.B, d *Detector, text string) {
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	var dst []detect.Finding
	for b.Loop() {
		dst = d.Scan(text, dst[:0])
	}
}

// BenchmarkScanToolResult measures the full rule set on a 64 KiB JSON tool
// result; the issue asks for 25 MB/s or more per core (-cpu 1).
func BenchmarkScanToolResult(b *testing.B) {
	token, _ := githubStyle("ghp_")(rand.New(rand.NewPCG(5, 6)))
	b.Run("clean", func(b *testing.B) { benchmarkScan(b, Default(), benchToolResult("")) })
	b.Run("with_secret", func(b *testing.B) { benchmarkScan(b, Default(), benchToolResult(token)) })
	b.Run("high_entropy", func(b *testing.B) {
		d, err := New(Options{HighEntropy: true})
		if err != nil {
			b.Fatal(err)
		}
		benchmarkScan(b, d, benchToolResult(""))
	})
}

// BenchmarkScanKeywordFlood is the adversarial case: a text made of
// keywords that pass the boundary checks, so that every one runs its rule.
func BenchmarkScanKeywordFlood(b *testing.B) {
	for _, unit := range []string{"sk-_", "eyJ-", "https://a1 ", "postgres://a:b ", "-----BEGIN PRIVATE KEY-----\nMIIE"} {
		b.Run(strings.Trim(unit[:min(len(unit), 8)], "-/: _"), func(b *testing.B) {
			benchmarkScan(b, Default(), strings.Repeat(unit, toolResultSize/len(unit)))
		})
	}
}

// TestBenchmarkTextIsRealistic: the benchmark's tool result holds no
// secret but the one it is given, so that its figure is for the common case.
func TestBenchmarkTextIsRealistic(t *testing.T) {
	if got := Default().Scan(benchToolResult(""), nil); len(got) != 0 {
		t.Errorf("clean tool result: %v", got)
	}
	token, _ := githubStyle("ghp_")(rand.New(rand.NewPCG(5, 6)))
	if got := Default().Scan(benchToolResult(token), nil); len(got) != 1 || got[0].Kind != "github_token" {
		t.Errorf("tool result with a token: %v", got)
	}
}
