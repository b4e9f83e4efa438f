package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
)

// mcpclient in the 2026-07-28 ("modern") era: after a "modern" line every
// request sent carries the envelope in params._meta, and "retry" resends a
// request with the answers an input_required result asked for
// (spec2026.md §1, §7). Over HTTP the headers that mirror the body are
// added too (mcpclient_http_test.go).

// modernMode is what a "modern" line set.
type modernMode struct {
	version string
	caps    json.RawMessage
}

// parseModern reads "modern [VERSION [CAPS]]".
func parseModern(rest string) (*modernMode, error) {
	version, caps, _ := strings.Cut(strings.TrimSpace(rest), " ")
	m := &modernMode{version: version, caps: json.RawMessage(strings.TrimSpace(caps))}
	if m.version == "" {
		m.version = modernVersion
	}
	if len(m.caps) == 0 {
		m.caps = json.RawMessage(`{}`)
	}
	if !json.Valid(m.caps) {
		return nil, fmt.Errorf("modern: capabilities %s are not JSON", m.caps)
	}
	return m, nil
}

// encodeJSON encodes without escaping <, > and &, so that what a script
// wrote travels as written.
func encodeJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// prepare is what goes out for a send line: the message as written (a
// request is remembered for retry), or in modern mode and unless raw, a
// request with the envelope merged into params._meta; keys the script
// wrote win, so a script can send a wrong version. Notifications and what
// is not a JSON object go as written.
func (c *client) prepare(msg string, raw bool) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(msg), &m) != nil {
		return msg
	}
	id, hasID := m["id"]
	if _, hasMethod := m["method"]; !hasID || !hasMethod {
		return msg
	}
	if key, err := canonical(id); err == nil {
		c.mu.Lock()
		c.sent[string(key)] = maps.Clone(m)
		c.mu.Unlock()
	}
	if c.modern == nil || raw {
		return msg
	}
	var params map[string]json.RawMessage
	if raw, ok := m["params"]; ok && (json.Unmarshal(raw, &params) != nil || params == nil) {
		return msg // not an object: as written, for the server to refuse
	}
	if params == nil {
		params = map[string]json.RawMessage{}
	}
	var meta map[string]json.RawMessage
	if raw, ok := params["_meta"]; ok && (json.Unmarshal(raw, &meta) != nil || meta == nil) {
		return msg
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	envelope := map[string]json.RawMessage{
		metaProtocolVersion: encodeJSON(c.modern.version),
		metaClientCaps:      c.modern.caps,
		metaClientInfo:      json.RawMessage(`{"name":"mcpclient","version":"1"}`),
	}
	for k, v := range envelope {
		if _, ok := meta[k]; !ok {
			meta[k] = v
		}
	}
	params["_meta"] = encodeJSON(meta)
	m["params"] = encodeJSON(params)
	return string(encodeJSON(m))
}

// noteAnswer remembers the requestState of each answer (nil: it had none),
// by id, for retry; msg is the message as received, so that the state is
// copied byte for byte.
func (c *client) noteAnswer(msg []byte) {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil {
		return
	}
	_, isRequest := m["method"]
	_, hasResult := m["result"]
	_, hasError := m["error"]
	key, err := canonical(m["id"])
	if isRequest || (!hasResult && !hasError) || err != nil {
		return
	}
	var result map[string]json.RawMessage
	json.Unmarshal(m["result"], &result)
	c.mu.Lock()
	c.answers[string(key)] = result["requestState"]
	c.mu.Unlock()
}

// retryMessage builds "retry ID NEWID [JSON]": the request that had id ID
// again with id NEWID, inputResponses JSON (none if not given) and the
// requestState of the answer to ID (none if it had none).
func (c *client) retryMessage(rest string) (string, error) {
	fields := strings.SplitN(strings.TrimSpace(rest), " ", 3)
	if len(fields) < 2 {
		return "", errors.New("retry ID NEWID [INPUTRESPONSES]")
	}
	id, err1 := canonical([]byte(fields[0]))
	newID, err2 := canonical([]byte(fields[1]))
	if err1 != nil || err2 != nil {
		return "", fmt.Errorf("retry: ids are JSON, as in expect id=ID: 2, \"a\"; not %s %s", fields[0], fields[1])
	}
	c.mu.Lock()
	orig, sent := c.sent[string(id)]
	state, answered := c.answers[string(id)]
	c.mu.Unlock()
	if !sent {
		return "", fmt.Errorf("retry: no request with id %s was sent", id)
	}
	if !answered {
		return "", fmt.Errorf("retry: no answer to id %s has come (expect id=%s first)", id, id)
	}
	m := maps.Clone(orig)
	m["id"] = newID
	var params map[string]json.RawMessage
	json.Unmarshal(m["params"], &params)
	if params == nil {
		params = map[string]json.RawMessage{}
	}
	delete(params, "inputResponses")
	delete(params, "requestState")
	if len(fields) == 3 {
		responses := json.RawMessage(strings.TrimSpace(fields[2]))
		if !json.Valid(responses) {
			return "", fmt.Errorf("retry: inputResponses %s are not JSON", responses)
		}
		params["inputResponses"] = responses
	}
	if state != nil {
		params["requestState"] = state
	}
	m["params"] = encodeJSON(params)
	return string(encodeJSON(m)), nil
}
