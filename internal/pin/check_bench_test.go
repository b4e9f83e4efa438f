package pin

import (
	"encoding/json"
	"fmt"
	"testing"
)

// BenchmarkCheckList: a pinned server's list of 502 tools checked against
// the lock, as at every fetch of a list that did not change.
func BenchmarkCheckList(b *testing.B) {
	l := New()
	var defs []json.RawMessage
	for i := range 502 {
		def := json.RawMessage(fmt.Sprintf(`{"name": "query_%03d", "description": "Runs query %d against the records it holds and returns the rows as JSON, newest first.", `+
			`"inputSchema": {"type": "object", "properties": {"table": {"type": "string", "description": "the table to read"}, "limit": {"type": "integer", "minimum": 1}}, "required": ["table"]}}`, i, i))
		e, err := Pin("s", "tool", def)
		if err != nil {
			b.Fatal(err)
		}
		l.Add(e)
		defs = append(defs, def)
	}
	b.ReportAllocs()
	for range b.N {
		for _, def := range defs {
			if status, _, _ := l.Check("s", "tool", def); status != Same {
				b.Fatal(status)
			}
		}
	}
}
