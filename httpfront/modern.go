package httpfront

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate/internal/mcpheader"
	"github.com/mcpgate/mcpgate/internal/rawjson"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/proxy"
)

// The modern era (MCP 2026-07-28) over HTTP has no sessions: every request
// is a POST that carries the protocol version, the client's capabilities
// and identity in its _meta (the envelope), and mirrors its method, name
// and designated arguments into headers so that proxies can route it
// unparsed. The era of a POST is read from its body first, as the spec
// and both SDKs do: an envelope makes it modern, whatever session id it
// names; initialize without one opens a legacy session.

// metaProtocolVersion is the _meta key whose presence makes a request modern.
const metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// errHeaderMismatch is the modern era's HeaderMismatch (-32020): a header
// is missing, malformed, or disagrees with the body.
var errHeaderMismatch = &jsonrpc.Error{Code: -32020, Message: "header mismatch"}

// The modern error codes that the spec answers with 400 over HTTP.
const (
	codeHeaderMismatch     = -32020
	codeMissingCapability  = -32021
	codeUnsupportedVersion = -32022
)

// modernClaim returns the protocol version a request's envelope names (raw
// JSON), or nil for a request without an envelope: a legacy one. Like
// proxy.CheckModern, it counts the key only inside params._meta.
// quotedProtocolVersion is the envelope's key as a JSON text holds it
// when written plainly.
var quotedProtocolVersion = []byte(`"` + metaProtocolVersion + `"`)

func modernClaim(msg *jsonrpc.Message) json.RawMessage {
	if msg == nil || !rawjson.MayHoldKey(msg.Params, quotedProtocolVersion) {
		return nil
	}
	params, ok := paramMembers(msg)
	if !ok {
		return nil
	}
	meta, _ := params.Get("_meta")
	var members [8]rawjson.Member // on the stack: only a value (the message's bytes) is kept
	ms, err := rawjson.SplitValidInto(members[:], meta)
	if err != nil {
		return nil
	}
	v, _ := ms.Get(metaProtocolVersion)
	return v
}

// firstModernVersion is the oldest modern protocol version, asked for once:
// proxy.ModernVersions returns a copy each time.
var firstModernVersion = proxy.ModernVersions()[0]

// isModernVersion reports whether an MCP-Protocol-Version header names the
// modern era. Versions are dates; like both SDKs, anything that sorts at or
// after the first modern one counts (the conformance suite's "v999.0.0"
// too), so that an unknown future version is refused as such, not taken
// for a legacy request.
func isModernVersion(v string) bool {
	return v >= firstModernVersion
}

// checkModern checks a modern request as the spec's server validation
// does, in the order the conformance suite expects: the headers against
// the body first (MCP-Protocol-Version, Mcp-Method, Mcp-Name,
// Mcp-Param-*: -32020), then the envelope, the version and the method
// (proxy.CheckModern: -32602, -32022, -32601). It returns the HTTP status
// to answer with, and the error; nil when the request may be served, with
// the request as checked, for the session that serves it.
func (f *Front) checkModern(r *http.Request, msg *jsonrpc.Message, claim json.RawMessage) (*proxy.ModernRequest, int, *jsonrpc.Error) {
	if err := f.checkHeaders(r, msg, claim); err != nil {
		return nil, http.StatusBadRequest, err
	}
	checked, err := proxy.CheckModernRequest(msg)
	if err != nil {
		return nil, statusOf(err), err
	}
	return checked, 0, nil
}

func (f *Front) checkHeaders(r *http.Request, msg *jsonrpc.Message, claim json.RawMessage) *jsonrpc.Error {
	version, err := oneHeader(r, headerProtocol, mcpheader.ProtocolVersion)
	if err != nil {
		return err
	}
	if version == "" || !sameJSONString(claim, version) {
		if claimed, ok := jsonString(claim); ok { // not a string: the envelope check says so (-32602)
			switch {
			case version == "":
				return jsonrpc.Errorf(errHeaderMismatch, "header mismatch: the %s header is missing; a request whose _meta names protocol %s sends it in that header too", mcpheader.ProtocolVersion, quoteShort(claimed))
			case version != claimed:
				return jsonrpc.Errorf(errHeaderMismatch, "header mismatch: the %s header says %s but the request's _meta says %s; send the same version in both", mcpheader.ProtocolVersion, quoteShort(version), quoteShort(claimed))
			}
		}
	}
	method, err := oneHeader(r, mcpheader.Method, mcpheader.Method)
	switch {
	case err != nil:
		return err
	case method == "":
		return jsonrpc.Errorf(errHeaderMismatch, "header mismatch: the %s header is missing; send the request's method (%s) in it", mcpheader.Method, quoteShort(msg.Method))
	case method != msg.Method:
		return jsonrpc.Errorf(errHeaderMismatch, "header mismatch: the %s header says %s but the body's method is %s (methods are case-sensitive)", mcpheader.Method, quoteShort(method), quoteShort(msg.Method))
	}
	field := nameField[msg.Method]
	if field == "" {
		return nil
	}
	params, _ := paramMembers(msg) // valid: modernClaim read it
	raw, _ := params.Get(field)
	body, ok := jsonString(raw)
	if !ok {
		return nil // no name: the request is invalid anyway, and serving it says so (-32602)
	}
	if err := checkName(r, field, body); err != nil {
		return err
	}
	if msg.Method != "tools/call" {
		return nil
	}
	schema, ok := f.g.FetchToolInputSchema(r.Context(), body)
	if !ok {
		return nil // no such tool: serving the call says so
	}
	designated, perr := mcpheader.Params(schema)
	if perr != nil {
		// Clients over HTTP must not call a tool whose annotations break
		// the rules; one that does is not held to them either.
		return nil
	}
	arguments, _ := params.Get("arguments")
	if err := mcpheader.CheckParams(designated, arguments, r.Header.Values); err != nil {
		return jsonrpc.Errorf(errHeaderMismatch, "header mismatch: %v", err)
	}
	return nil
}

// nameField is where the body says what Mcp-Name must: the three methods
// that name one thing.
var nameField = map[string]string{"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

// checkName checks Mcp-Name against the body's name or URI. The error
// names neither value: a URI may carry a token in its query.
func checkName(r *http.Request, field, body string) *jsonrpc.Error {
	values := r.Header[mcpheader.Name] // in canonical form (TestHeaderKeysAreCanonical)
	switch len(values) {
	case 0:
		return jsonrpc.Errorf(errHeaderMismatch, "header mismatch: the %s header is missing; a %s request sends its params.%s in it (=?base64?…?= when it is not plain ASCII)", mcpheader.Name, describeNamed[field], field)
	case 1:
	default:
		return jsonrpc.Errorf(errHeaderMismatch, "header mismatch: the %s header is sent %d times; send it once", mcpheader.Name, len(values))
	}
	name, err := mcpheader.Decode(values[0])
	if err != nil {
		return jsonrpc.Errorf(errHeaderMismatch, "header mismatch: the %s header %v", mcpheader.Name, err)
	}
	if name != body {
		return jsonrpc.Errorf(errHeaderMismatch, "header mismatch: the %s header does not match the body's params.%s", mcpheader.Name, field)
	}
	return nil
}

var describeNamed = map[string]string{"name": "tools/call or prompts/get", "uri": "resources/read"}

// oneHeader returns a header's value, whitespace around it trimmed; "" when
// absent. A header sent more than once is an error: which one counts would
// depend on who reads it. key is the header's name in canonical form, as
// net/http keeps it (Header.Values would make it on every request, two
// allocations for MCP-Protocol-Version); name, as the errors spell it.
func oneHeader(r *http.Request, key, name string) (string, *jsonrpc.Error) {
	values := r.Header[key]
	switch len(values) {
	case 0:
		return "", nil
	case 1:
		return strings.Trim(values[0], " \t"), nil
	}
	return "", jsonrpc.Errorf(errHeaderMismatch, "header mismatch: the %s header is sent %d times; send it once", name, len(values))
}

// statusOf is the HTTP status the spec gives a modern request's error when
// it is answered before anything is sent: 404 for a method that does not
// exist in the modern era, 400 for what the client must fix. Errors that
// serving the request produced (an unknown tool, a resource not found, a
// tool's own failure) are answered with 200, as the TypeScript SDK does:
// the request was valid, the error is its answer.
func statusOf(err *jsonrpc.Error) int {
	switch err.Code {
	case jsonrpc.ErrMethodNotFound.Code:
		return http.StatusNotFound
	case jsonrpc.ErrInvalidParams.Code, codeHeaderMismatch, codeMissingCapability, codeUnsupportedVersion:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// servedStatus is the status of a served request's answer: 200, but 400
// for the errors the spec says are the client's to fix whoever finds them
// (a capability it did not declare: -32021).
func servedStatus(answer []byte) int {
	if !bytes.Contains(answer, []byte(`"error"`)) {
		return http.StatusOK // a result: nothing decoded (nor allocated) for it
	}
	return errorAnswerStatus(answer)
}

// errorAnswerStatus is servedStatus for an answer that may be an error.
func errorAnswerStatus(answer []byte) int {
	var m struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(answer, &m) != nil || m.Error == nil {
		return http.StatusOK
	}
	if slices.Contains([]int{codeHeaderMismatch, codeMissingCapability, codeUnsupportedVersion}, m.Error.Code) {
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// quoteShort quotes a value from the client for an error message, cut to a
// sensible length: a header may be a megabyte.
func quoteShort(s string) string {
	const max = 64
	if len(s) > max {
		return fmt.Sprintf("%q…", s[:max])
	}
	return fmt.Sprintf("%q", s)
}
