package proxy

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpgate/mcpgate/config"
)

// BenchmarkAuditSync: the cost of one request's record, encoded, redacted,
// chained and written, under each audit.sync mode; "always" also with
// requests answered at once (they share fsyncs). The file goes in
// MCPGATE_BENCH_DIR if set (the disk the trail would be on), else in the
// temporary directory: a tmpfs makes fsync free.
func BenchmarkAuditSync(b *testing.B) {
	rec := auditRecord{Session: "402f8b3f0c6e4a3c9d1f2b7a8e5c6d40", Method: "tools/call", Server: "notes", Name: "notes__add", Upstream: "add",
		ID: json.RawMessage("2"), DurationMS: 0.271, Outcome: "ok", BytesIn: 105, BytesOut: 98}
	open := func(b *testing.B, sync string) *auditLog {
		dir := os.Getenv("MCPGATE_BENCH_DIR")
		if dir == "" {
			dir = b.TempDir()
		}
		path := filepath.Join(dir, "bench-audit.jsonl")
		os.Remove(path)
		b.Cleanup(func() { os.Remove(path); os.Remove(path + ".lock") })
		a, err := openAudit(config.Audit{Path: path, Sync: sync}, slog.New(slog.DiscardHandler), redactTok)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { a.close() })
		return a
	}
	for _, sync := range []string{config.SyncAlways, config.SyncBatch, config.SyncNone} {
		b.Run(sync, func(b *testing.B) {
			a := open(b, sync)
			for b.Loop() {
				r := rec
				a.write(&r)
			}
		})
	}
	b.Run("always-parallel", func(b *testing.B) {
		a := open(b, config.SyncAlways)
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				r := rec
				a.write(&r)
			}
		})
	})
}
