package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/mcpgate/mcpgate/internal/mcpheader"
	"github.com/mcpgate/mcpgate/internal/rawjson"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Streamable HTTP in the modern era (2026-07-28), seen from the client
// side: no session, no GET stream, no resumption. Every request is a POST
// that names itself in headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name)
// besides its body, so that intermediaries can route it without reading
// the body; closing the answer stream is the cancellation. An error the
// server answers with 400 or 404 carries a JSON-RPC error, which is the
// request's answer.

const (
	headerMethod = mcpheader.Method
	headerName   = mcpheader.Name
)

// setModern switches the link's era: a modern link keeps no session and
// opens no GET stream.
func (l *httpLink) setModern(modern bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.modern = modern
	if modern {
		l.protocol = versionModern // (a modern request waits for no GET stream: see Write)
	} else if l.protocol == versionModern {
		l.protocol = ""
	}
}

func (l *httpLink) isModern() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.modern
}

// sendModern POSTs one message of the modern era. Only requests go: the
// era has no client notifications over HTTP (a cancellation is the
// closing of the request's stream, done by abandon).
func (l *httpLink) sendModern(ctx context.Context, msg []byte, m *jsonrpc.Message) {
	if !m.IsRequest() {
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.url, bytes.NewReader(msg))
	if err != nil {
		l.failRequest(m, "%v", err)
		return
	}
	l.setHeaders(req, "")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(headerMethod, m.Method)
	if name, ok := nameOf(m); ok {
		req.Header.Set(headerName, mcpheader.Encode(name))
		if m.Method == methodToolsCall {
			l.setParamHeaders(req, name, m.Params)
		}
	}
	resp, err, retried := l.post(req, m.Method)
	if err != nil {
		if ctx.Err() == nil {
			l.markGone("cannot reach " + l.shown + ": " + unwrapURLError(err).Error())
		}
		return
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
		l.readAnswer(ctx, resp, m)
	case isJSONRPC(resp):
		// 400, 404: the body is the JSON-RPC error that answers the request.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, int64(l.max)+1))
		if d, err := jsonrpc.Decode(body); err == nil && d.IsResponse() && d.ID.SameValue(m.ID) {
			l.push(body)
			return
		}
		l.failRequest(m, "HTTP %s: %s", resp.Status, l.errorBody(bytes.NewReader(body)))
	default:
		l.failRequest(m, "HTTP %s: %s%s", resp.Status, l.errorBody(resp.Body), retried)
	}
}

// nameOf is what a request's Mcp-Name header says: the tool or prompt
// name, or the resource URI.
func nameOf(m *jsonrpc.Message) (string, bool) {
	key := ""
	switch m.Method {
	case methodToolsCall, methodPromptsGet:
		key = "name"
	case methodResourcesRead:
		key = "uri"
	default:
		return "", false
	}
	_, v, err := stringParam(m.Params, key)
	return v, err == nil
}

// setParamHeaders mirrors the arguments the tool's inputSchema designates
// (x-mcp-header) into Mcp-Param-* headers, as a client of the modern era
// must: from the tool as the server last listed it.
func (l *httpLink) setParamHeaders(req *http.Request, tool string, params json.RawMessage) {
	if l.toolSchema == nil {
		return
	}
	schema, ok := l.toolSchema(tool)
	if !ok {
		return
	}
	designated, err := mcpheader.Params(schema)
	if err != nil || len(designated) == 0 {
		return
	}
	ms, err := rawjson.SplitValid(params)
	if err != nil {
		return
	}
	args, _ := ms.Get("arguments")
	for _, p := range designated {
		if v, ok := p.Lookup(args); ok {
			if h, ok := mcpheader.EncodeArg(v); ok {
				req.Header.Set(p.HeaderName(), h)
			}
		}
	}
}
