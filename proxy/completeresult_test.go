package proxy

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcpgate/mcpgate/internal/rawjson"
)

// completeResult writes what it wrote when it split on the heap and
// replaced with ms.Replace: the same bytes, for any result.
func TestCompleteResultUnchanged(t *testing.T) {
	reference := func(res json.RawMessage) json.RawMessage {
		ms, err := rawjson.SplitValid(res)
		if err != nil {
			return res
		}
		if _, ok := ms.Get("resultType"); ok {
			return res
		}
		return ms.Replace(res, "resultType", json.RawMessage(`"complete"`))
	}
	for _, res := range []string{
		`{}`, ` { } `, `{"content":[{"type":"text","text":"hi"}]}`,
		`{"content":[],"isError":true }` + "\n",
		`{"resultType":"input_required","inputRequests":{}}`,
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17}`,
		`[1]`, `null`, ``,
	} {
		want := reference(json.RawMessage(res))
		var s session
		if got, err := s.completeResult(json.RawMessage(res), &auditRecord{}); err != nil || !bytes.Equal(got, want) {
			t.Errorf("completeResult(%s) = %s, %v, want %s", res, got, err, want)
		}
	}
}
