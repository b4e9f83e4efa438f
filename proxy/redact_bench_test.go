package proxy

import (
	"encoding/json"
	"strings"
	"testing"
)

// BenchmarkAuditRedact: the cost of keeping secrets out of an audit record
// with a 1 MB result (text with escapes, as tool results are), next to the
// cost of encoding the record at all.
func BenchmarkAuditRedact(b *testing.B) {
	text := strings.Repeat("line of tool output\n", 50_000)
	result, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": text}}})
	rec := &auditRecord{Method: "tools/call", Result: result}
	b.Run("marshal", func(b *testing.B) {
		b.SetBytes(int64(len(result)))
		for b.Loop() {
			json.Marshal(rec)
		}
	})
	line, _ := json.Marshal(rec)
	b.Run("redact", func(b *testing.B) {
		b.SetBytes(int64(len(result)))
		for b.Loop() {
			redactJSON(line, redactTok)
		}
	})
}
