package rawjson

import (
	"fmt"
	"strings"
	"testing"
)

// toolListAnswer is a tools/list answer of n tools as servers describe
// theirs (perf_bench_test.go's perfToolDefinition): many short strings.
func toolListAnswer(n int) []byte {
	tools := make([]string, n)
	for i := range tools {
		tools[i] = fmt.Sprintf(`{"name": "s%d_query_%03d", "description": "Runs query %d of workspace %d against the records it holds and returns the rows as JSON, newest first; narrow them down with filter and limit.", `+
			`"inputSchema": {"type": "object", "properties": {"table": {"type": "string", "description": "the table to read"}, `+
			`"filter": {"type": "string", "description": "a filter expression such as status = 'open'"}, `+
			`"limit": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "how many rows at most"}}, "required": ["table"]}}`,
			i%10, i, i, i%10)
	}
	return []byte(`{"jsonrpc":"2.0","id":3,"result":{"tools":[` + strings.Join(tools, ",\n") + `]}}`)
}

// BenchmarkIncrementalToolList: the validation of a list of 502 tools as a
// line reader makes it, fed in reads of 64 KiB.
func BenchmarkIncrementalToolList(b *testing.B) {
	msg := toolListAnswer(502)
	b.SetBytes(int64(len(msg)))
	var s Incremental
	for b.Loop() {
		s.Reset()
		for n := 64 << 10; n < len(msg); n += 64 << 10 {
			s.Feed(msg[:n])
		}
		if _, _, ok := s.finish(msg); !ok {
			b.Fatal("not valid")
		}
	}
}

// BenchmarkSplitWithObjectsToolList: the split of a list result of 502
// tools, items included, as the gateway makes it for each server's list.
func BenchmarkSplitWithObjectsToolList(b *testing.B) {
	msg := toolListAnswer(502)
	res := msg[strings.Index(string(msg), `"result":`)+len(`"result":`) : len(msg)-1]
	b.SetBytes(int64(len(res)))
	for b.Loop() {
		if _, list, err := SplitWithObjects(res, "tools"); err != nil || len(list.Elems) != 502 {
			b.Fatal(err)
		}
	}
}
