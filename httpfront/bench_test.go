package httpfront

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkToolCallHTTP times a tools/call round trip over HTTP through
// the front to a stdio server: in a legacy session, and as a modern
// stateless request, which is served by a gateway session of its own each
// time. The modern one should cost about what the legacy one does.
func BenchmarkToolCallHTTP(b *testing.B) {
	_, ts := newServedFront(b, "", nil)
	client := ts.Client()
	call := func(b *testing.B, body string, headers map[string]string) {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(answer), "hello over HTTP") {
			b.Fatalf("%s %s", resp.Status, answer)
		}
	}
	b.Run("legacy", func(b *testing.B) {
		init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`
		resp, err := client.Post(ts.URL+"/mcp", "application/json", strings.NewReader(init))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		headers := map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}
		// As clients do, it lists the tools first: a call by a name listed
		// goes without handoffs (see proxy/httpinline.go).
		list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(list))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		if resp, err = client.Do(req); err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"text":"hi"}}}`
		call(b, body, headers)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			call(b, body, headers)
		}
	})
	b.Run("modern", func(b *testing.B) {
		headers := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "hello"}
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"text":"hi"},` + envelope + `}}`
		call(b, body, headers)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			call(b, body, headers)
		}
	})
}

// BenchmarkToolCallHTTPToken is the legacy round trip of
// BenchmarkToolCallHTTP with a bearer token required: what checking it
// and naming the client by it cost each request.
func BenchmarkToolCallHTTPToken(b *testing.B) {
	const token = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	_, ts := newServedFront(b, `, "auth": {"tokens": ["another-token-of-the-same-deployment-0123456789abcdef0123456789ab", "`+token+`"]}`, nil)
	client := ts.Client()
	post := func(b *testing.B, body, session string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		return resp
	}
	resp := post(b, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`, "")
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"text":"hi"}}}`
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		resp := post(b, body, session)
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(answer), "hello over HTTP") {
			b.Fatalf("%s %s", resp.Status, answer)
		}
	}
}
