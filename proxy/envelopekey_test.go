package proxy

import "testing"

func TestMayHoldEnvelope(t *testing.T) {
	for params, want := range map[string]bool{
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`:  true,
		`{"_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28"}}`: true,
		`{"_meta":{"\u0069o.modelcontextprotocol/protocolVersion":"x"}}`:      true,
		`{"name":"t","arguments":{"path":"C:\\dir\\file"}}`:                   false,
		`{"name":"t","arguments":{"q":"a \"b\" c"}}`:                          false,
		`{"name":"t","arguments":{"q":"\\u"}}`:                                false, // an escaped backslash, then u
		`{"name":"t"}`:                                                        false,
		`\`:                                                                   false,
	} {
		if got := mayHoldEnvelope([]byte(params)); got != want {
			t.Errorf("mayHoldEnvelope(%s) = %v, want %v", params, got, want)
		}
	}
}
