package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkPerfCallAudited: BenchmarkPerfCall's mcpgate with an audit
// trail (audit.sync "batch", the default): what a record costs a call,
// written on its server's reader when nothing stands in the way, else
// queued for the trail's goroutine (proxy/auditlater.go).
func BenchmarkPerfCallAudited(b *testing.B) {
	dir := b.TempDir()
	server := perfServer{"fake", writeFile(b, dir, "echo.json",
		`{"name": "echo", "tools": [{"name": "echo", "do": {"text": "ok"}}]}`)}
	const args = `{"text":"hello","n":42,"nested":{"list":[1,2,3]}}`
	for _, conc := range []int{1, 16} {
		b.Run(fmt.Sprintf("C=%d", conc), func(b *testing.B) {
			trail := strconv.Quote(filepath.Join(b.TempDir(), "audit.jsonl"))
			p := startPerfPeer(b, perfGate, []perfServer{server}, `"audit": {"path": `+trail+`}`)
			params := perfToolCall(p.tool("fake", "echo"), args)
			benchPerfCalls(b, p.hopPID, conc, perfWarmup(), func(answered chan perfAnswer) perfAnswer {
				return p.client.call("tools/call", params, answered)
			})
		})
	}
}
