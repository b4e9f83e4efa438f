package proxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/internal/rawjson"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A modern server that needs something from the client (an elicitation, a
// sampling, the roots) answers a request with input_required: the requests
// it needs answered, and a requestState to send back with the answers when
// the request is made again. A modern client does that itself; for a
// legacy client mcpgate does, the way that client knows: each input request
// goes to it as a real request of its own (on the answer stream of the
// client's request, over HTTP), and the answers go back to the server on a
// new request with the requestState byte for byte. The client sees one
// ordinary answer. Rounds are bounded (maxInputRounds); a request the
// client cannot serve (it did not declare the capability) ends it: a tool
// call with a tool error that says why, another request with an error.

// maxInputRounds bounds the rounds of input one request may take.
const maxInputRounds = 8

// maxInputRequests bounds the inputs one round may ask for: each is a
// request to the client, and a result of a few megabytes could name
// hundreds of thousands. A round that asks for more ends the request.
const maxInputRequests = 16

// stateOnlyPause paces a round that asks for nothing but to be sent again
// (a server shedding load): the server is not asked again at once.
const stateOnlyPause = 250 * time.Millisecond

var inputRequiredType = []byte(`"input_required"`)

// inputRequired reports whether a result asks for input.
func inputRequired(res json.RawMessage) bool {
	asks, _ := readInputRequired(res)
	return asks
}

// readInputRequired is inputRequired with the error of a result that cannot
// be split (one that repeats a member: see repeatedMember). The value is
// read as the client reads it, an escape in it ("input\u005frequired")
// included; a result with neither the word nor an escape is not split.
func readInputRequired(res json.RawMessage) (bool, error) {
	if !rawjson.MayHoldKey(res, inputRequiredType) {
		return false, nil
	}
	ms, err := rawjson.SplitValid(res)
	if err != nil {
		return false, err
	}
	t, _ := ms.Get("resultType")
	if bytes.IndexByte(t, '\\') < 0 {
		return bytes.Equal(t, inputRequiredType), nil
	}
	v, err := stringValue(t)
	return err == nil && v == "input_required", nil
}

// asksInput reports whether a modern server's result res to method asks
// for input; one that repeats a member is refused, as mcpgate and the
// client could each read another resultType.
func (s *session) asksInput(up *upstream, method string, res json.RawMessage) (bool, error) {
	asks, err := readInputRequired(res)
	return asks, s.repeatedMember(err, up.name, method)
}

// inputRequest is one entry of an input_required result's inputRequests.
type inputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// fulfilInput asks the legacy client behind ctx for the input a modern
// server's answer res requires, and makes the request (method, params, as
// first sent) again with the answers, until the server answers it.
func (s *session) fulfilInput(ctx context.Context, up *upstream, method string, params, res json.RawMessage) (json.RawMessage, error) {
	req, _ := requestFrom(ctx)
	for round := 1; ; round++ {
		if round > maxInputRounds {
			return s.inputFailed(method, fmt.Sprintf("upstream %q still asked for input after %d rounds", up.name, maxInputRounds))
		}
		ms, err := rawjson.SplitValid(res)
		var asked map[string]inputRequest
		if err == nil {
			if raw, ok := ms.Get("inputRequests"); ok {
				if n := countMembers(raw); n > maxInputRequests {
					return s.inputFailed(method, fmt.Sprintf("upstream %q asked for %d inputs in one round; mcpgate passes at most %d to a client", up.name, n, maxInputRequests))
				}
				err = json.Unmarshal(raw, &asked)
			}
		}
		state, hasState := ms.Get("requestState")
		if err != nil || (len(asked) == 0 && !hasState) {
			return nil, jsonrpc.Errorf(jsonrpc.ErrInternal, "upstream %q answered %s with an input_required result mcpgate cannot read", up.name, method)
		}
		answers, why := s.askClient(ctx, req, asked)
		if why != "" {
			return s.inputFailed(method, why)
		}
		if len(asked) == 0 {
			select {
			case <-time.After(stateOnlyPause):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		retry := withInput(params, answers, state)
		dl := up.newDeadline()
		sent, progress := s.g.mapProgressToken(s, req.id, up, retry, dl)
		res, err = up.callWatched(ctx, method, sent, dl)
		progress.release()
		if err != nil {
			return res, err
		}
		if asks, err := s.asksInput(up, method, res); err != nil || !asks {
			return res, err
		}
	}
}

// countMembers is how many members the object obj has; 0 for anything
// else (json.Unmarshal then says what is wrong with it).
func countMembers(obj json.RawMessage) int {
	ms, err := rawjson.SplitValid(obj)
	if err != nil {
		return 0
	}
	return len(ms)
}

// askClient sends the client each input request, all at once, and returns
// the answers by key; or why they cannot all be had.
func (s *session) askClient(ctx context.Context, req clientRequest, asked map[string]inputRequest) (map[string]json.RawMessage, string) {
	keys := make([]string, 0, len(asked))
	for k, r := range asked {
		if _, known := serverMethods[r.Method]; !known || serverMethods[r.Method].capability == "" {
			return nil, fmt.Sprintf("the server asked for %q (%s), which is not a request a client answers", k, r.Method)
		}
		if err := s.supports(r.Method, r.Params); err != nil {
			return nil, fmt.Sprintf("the server needs %s, which this client cannot answer: %v", r.Method, err)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// As long as a modern client's answers are waited for (parkTTL): a
	// client that never answers does not hold the call for ever.
	ctx, cancel := context.WithTimeout(ctx, parkTTL)
	defer cancel()
	answers := make(map[string]json.RawMessage, len(keys))
	var mu sync.Mutex
	var failed string
	var wg sync.WaitGroup
	for _, k := range keys {
		r := asked[k]
		wg.Go(func() {
			res, err := s.callClient(ctx, req.id, r.Method, s.legacyInput(r))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if failed == "" {
					failed = fmt.Sprintf("the client did not answer %s: %v", r.Method, err)
				}
				return
			}
			answers[k] = res
		})
	}
	wg.Wait()
	return answers, failed
}

// legacyInput is an input request as a legacy client expects it: a
// url-mode elicitation of 2025-11-25 carries an elicitationId, which the
// modern era dropped.
func (s *session) legacyInput(r inputRequest) json.RawMessage {
	if r.Method != methodElicitationCreate || !bytes.Contains(r.Params, []byte(`"url"`)) {
		return r.Params
	}
	ms, err := rawjson.SplitValid(r.Params)
	if err != nil {
		return r.Params
	}
	var mode string
	if raw, ok := ms.Get("mode"); ok {
		json.Unmarshal(raw, &mode)
	}
	if _, has := ms.Get("elicitationId"); mode != "url" || has {
		return r.Params
	}
	var id [16]byte
	rand.Read(id[:])
	return ms.Replace(r.Params, "elicitationId", quote(hex.EncodeToString(id[:])))
}

// withInput is params with the client's answers and the server's state, as
// the retry of a request that asked for input carries them.
func withInput(params json.RawMessage, answers map[string]json.RawMessage, state json.RawMessage) json.RawMessage {
	ms, err := rawjson.SplitValid(params)
	if err != nil {
		params, ms = json.RawMessage("{}"), nil
	}
	out := ms.Replace(params, "inputResponses", mustJSON(answers))
	if len(state) > 0 {
		ms, _ = rawjson.SplitValid(out)
		out = ms.Replace(out, "requestState", state) // byte for byte as the server wrote it
	}
	return out
}

// inputFailed ends a request whose input could not be had: a tool call
// with a tool error (the model can adapt), anything else with an error.
func (s *session) inputFailed(method, why string) (json.RawMessage, error) {
	if method == methodToolsCall {
		return mustJSON(map[string]any{"content": []any{map[string]string{"type": "text", "text": "mcpgate could not get the input the tool needs: " + why}}, "isError": true}), nil
	}
	return nil, jsonrpc.Errorf(jsonrpc.ErrInternal, "mcpgate could not get the input %s needs: %s", method, why)
}

// legacyInputError tells a legacy client that a modern server needs input
// it cannot give (-32021, a code its protocol lacks) as it would be told
// by mcpgate: a tool error for a tool call, -32603 otherwise.
func (s *session) legacyInputError(method string, res json.RawMessage, err error) (json.RawMessage, error) {
	var e *jsonrpc.Error
	if err == nil || !errors.As(err, &e) || e.Code != codeMissingCapability {
		return res, err
	}
	return s.inputFailed(method, "the server needs input this client did not declare it can give: "+e.Message)
}
