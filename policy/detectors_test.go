package policy

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Realistic messages for the detector policies' tests and benchmarks.

// sampleOutput is ordinary tool output: a README, a git log, a listing, a
// log excerpt, code and a manifest.
const sampleOutput = "# mcp-notes\n\nA small MCP server that stores notes in SQLite and serves them as tools and resources.\n\n" +
	"## Installation\n\n```bash\ngo install example.com/mcp-notes@latest\nmcp-notes --db ~/.local/share/mcp-notes/notes.db\n```\n\n" +
	"The server reads its configuration from `config.toml` in the working directory. Environment\n" +
	"variables override values from the file: `NOTES_DB`, `NOTES_LOG_LEVEL`, `NOTES_MAX_RESULTS`.\n\n" +
	"If the server exits with `database is locked`, another process holds the file. Stop it, or set\n" +
	"`busy_timeout` in the config. You can ignore the warning about WAL mode on network drives; it only\naffects performance.\n\n" +
	"commit 4f2d9c1e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e\nAuthor: Sam Chen <sam.chen@dev-mail.net>\nDate:   Tue Mar 4 10:12:44 2025 +0100\n\n" +
	"    search: rank title matches above body matches\n\n" +
	"total 96\ndrwxr-xr-x  8 maria staff   256 Mar  4 10:12 .\n-rw-r--r--  1 maria staff  4096 Mar  4 10:12 go.mod\n-rw-r--r--  1 maria staff 18231 Mar  4 10:12 store.go\n\n" +
	"2025-03-14T09:26:01.114Z INFO  http: GET /api/v1/items?page=2&per_page=50 status=200 latency=12ms request_id=0a1b2c3d-7b3d-4c8e-9f0a-1b2c3d4e5f60\n" +
	"2025-03-14T09:26:01.377Z WARN  retrying https://storage.googleapis.com/bucket-7/objects attempt=2 backoff=250ms\n" +
	"2025-03-14T09:26:02.001Z DEBUG cache miss key=user:4411:profile ttl=300s locale=en-us\n\n" +
	"func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {\n" +
	"\ttoken := r.Header.Get(\"Authorization\")\n\tif !strings.HasPrefix(token, \"Bearer \") {\n" +
	"\t\thttp.Error(w, \"missing bearer token\", http.StatusUnauthorized)\n\t\treturn\n\t}\n" +
	"\tjson.NewEncoder(w).Encode(map[string]any{\"etag\": part.ETag, \"size\": part.Size})\n}\n\n" +
	"{\"name\": \"web-3\", \"version\": \"1.3.0\", \"scripts\": {\"build\": \"vite build\", \"test\": \"vitest run\"},\n" +
	" \"dependencies\": {\"react\": \"^18.3.1\", \"zod\": \"^3.23.8\"}, \"repository\": \"https://github.com/acme/web-3.git\"}\n"

// toolResult4K is a tools/call result of about 4 KB: one text content of
// ordinary output, as a file-reading or shell tool returns it.
func toolResult4K() string {
	text := sampleOutput
	for len(text) < 3900 {
		text += "\n" + sampleOutput
	}
	return toolResult(text[:3900])
}

// structuredResult4K is a tools/call result of about 4 KB made of many
// short strings: a structuredContent list of records, and its text form.
func structuredResult4K() string {
	type issue struct {
		ID     int      `json:"id"`
		Title  string   `json:"title"`
		State  string   `json:"state"`
		Author string   `json:"author"`
		Labels []string `json:"labels"`
		URL    string   `json:"url"`
	}
	var issues []issue
	for i := 0; i < 14; i++ {
		issues = append(issues, issue{ID: 4100 + i, Title: fmt.Sprintf("search: rank title matches above body matches (%d)", i),
			State: "open", Author: "maria", Labels: []string{"bug", "search"}, URL: fmt.Sprintf("https://github.com/acme/notes/issues/%d", 4100+i)})
	}
	structured, _ := json.Marshal(map[string]any{"issues": issues})
	msg, _ := json.Marshal(map[string]any{
		"content":           []any{map[string]any{"type": "text", "text": fmt.Sprintf("%d issues", len(issues))}},
		"structuredContent": json.RawMessage(structured),
	})
	return string(msg)
}

// toolResult is a tools/call result with text as its one text content.
func toolResult(text string) string {
	msg, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": false})
	return string(msg)
}

// jsonQuote is s as a JSON string literal, for writing messages by hand.
func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return strings.TrimSpace(string(b))
}
