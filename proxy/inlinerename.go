package proxy

import (
	"encoding/json"

	"github.com/mcpgate/mcpgate/internal/rawjson"
)

// appendRenamed appends params, with its "name" member's value replaced
// by name, to buf: what rawjson's ReplaceString makes, into memory an
// inline call keeps across uses (see inlinepool.go) rather than an
// allocation per call. ms is params' split, in which the name was read.
func appendRenamed(buf []byte, ms rawjson.MemberList, params json.RawMessage, name string) []byte {
	for _, m := range ms {
		if m.Key == "name" {
			buf = append(buf, params[:m.Start]...)
			buf = rawjson.AppendString(buf, name)
			return append(buf, params[m.Start+len(m.Value):]...)
		}
	}
	return ms.ReplaceString(params, "name", name) // not reached: the name was read from ms
}
