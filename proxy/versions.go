package proxy

import (
	"bytes"
	"encoding/json"

	"github.com/mcpgate/mcpgate/internal/rawjson"
)

// Each upstream's protocol version is negotiated on its own, and the
// client's on its own, so a result can carry what the client's version does
// not know. Unknown fields (structuredContent, title, icons, outputSchema)
// pass through: clients ignore fields they do not know, and the spec has
// servers repeat structured output as text. New content block types are a
// different matter: a client validating content against its own version's
// union rejects the whole result. So for older clients, tool result content
// that their version cannot have is turned into text that says the same.

// versionAtLeast compares protocol versions, which are dates.
func versionAtLeast(v, min string) bool { return v >= min }

// downgradeContent rewrites content blocks the client's version lacks:
// resource_link (2025-06-18) and audio (2025-03-26).
func downgradeContent(result json.RawMessage, clientVersion string) json.RawMessage {
	needLink := !versionAtLeast(clientVersion, version20250618) && bytes.Contains(result, []byte(`"resource_link"`))
	needAudio := !versionAtLeast(clientVersion, version20250326) && bytes.Contains(result, []byte(`"audio"`))
	if !needLink && !needAudio {
		return result
	}
	ms, err := rawjson.SplitValid(result)
	if err != nil {
		return result
	}
	content, ok := ms.Get("content")
	if !ok {
		return result
	}
	blocks, err := rawjson.ElementsValid(content)
	if err != nil {
		return result
	}
	out := []byte{'['}
	for i, b := range blocks {
		if i > 0 {
			out = append(out, ',')
		}
		var c struct {
			Type     string `json:"type"`
			URI      string `json:"uri"`
			Name     string `json:"name"`
			MimeType string `json:"mimeType"`
		}
		json.Unmarshal(b, &c)
		switch {
		case c.Type == "resource_link" && needLink:
			b = mustJSON(map[string]string{"type": "text", "text": "Resource " + c.Name + ": " + c.URI})
		case c.Type == "audio" && needAudio:
			b = mustJSON(map[string]string{"type": "text", "text": "[audio content (" + c.MimeType + ") omitted: the client's protocol version cannot carry audio]"})
		}
		out = append(out, b...)
	}
	return ms.Replace(result, "content", append(out, ']'))
}
