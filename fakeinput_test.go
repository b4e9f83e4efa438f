package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Multi-round-trip input (behaviour "input", spec2026.md §7): a tool,
// prompt or resource that needs answers from the client's user or model
// before it can answer.
//
// To a modern request the fake answers each round with an input_required
// result and is stateless: which round a retry answers follows from the
// requestState it echoes, never from memory. To a legacy request it does
// what the TypeScript SDK's shim does: it sends each round's requests to
// the client as real requests and goes on with the answers.
//
// Either way the final answer is a text that echoes the inputResponses of
// the last round, canonical JSON, so that a script sees what arrived.

// fakeRound is one round of input.
type fakeRound struct {
	Requests map[string]fakeAsk `json:"requests"` // the inputRequests, by key
	// State is the round's requestState ("": none). The fake finds the
	// round a retry answers by it, so rounds need distinct states.
	State string `json:"state"`
}

// inputStep serves a modern request to something with rounds: an
// input_required result to send, or (res nil) the inputResponses that
// answer the last round.
func (f *fake) inputStep(env *envelope, method string, rounds []fakeRound, params json.RawMessage) (res json.RawMessage, answers json.RawMessage, err error) {
	var p map[string]json.RawMessage
	json.Unmarshal(params, &p)
	var state string
	rawState, hasState := p["requestState"]
	if hasState && json.Unmarshal(rawState, &state) != nil {
		return nil, nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "%s: invalid requestState: %s is not a string", method, rawState)
	}
	var responses map[string]json.RawMessage
	rawResponses, hasResponses := p["inputResponses"]
	if hasResponses && (json.Unmarshal(rawResponses, &responses) != nil || responses == nil) {
		return nil, nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "%s: inputResponses must be an object of answers by key, not %s", method, rawResponses)
	}
	if !hasState && !hasResponses {
		res, err := f.inputRequired(env, method, rounds[0])
		return res, nil, err
	}
	k := slices.IndexFunc(rounds, func(r fakeRound) bool { return r.State == state })
	if k < 0 {
		if !hasState {
			return nil, nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "%s: invalid requestState: the retry has none; echo the requestState of the input_required answer byte for byte", method)
		}
		return nil, nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "%s: invalid requestState %q: no round sent it; echo the requestState of the input_required answer byte for byte", method, state)
	}
	for _, key := range slices.Sorted(maps.Keys(rounds[k].Requests)) {
		answer, ok := responses[key]
		if !ok {
			// Ask again rather than fail, as the spec says (§7.4).
			res, err := f.inputRequired(env, method, rounds[k])
			return res, nil, err
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(answer, &obj) != nil || obj == nil {
			return nil, nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "%s: inputResponses.%s must be the client's result object, not %s", method, key, answer)
		}
	}
	if k == len(rounds)-1 {
		return nil, rawResponses, nil
	}
	res, err = f.inputRequired(env, method, rounds[k+1])
	return res, nil, err
}

// inputRequired is a round's input_required result, once the client's
// capabilities allow every request in it (else -32021 naming the missing
// ones: the spec forbids asking what was not declared).
func (f *fake) inputRequired(env *envelope, method string, r fakeRound) (json.RawMessage, error) {
	missing := map[string]map[string]any{}
	for _, key := range slices.Sorted(maps.Keys(r.Requests)) {
		capability, mode := requiredCapability(r.Requests[key])
		if capability != "" && !declares(env.caps, capability, mode) {
			if missing[capability] == nil {
				missing[capability] = map[string]any{}
			}
			if mode != "" {
				missing[capability][mode] = map[string]any{}
			}
		}
	}
	if len(missing) > 0 {
		names := slices.Sorted(maps.Keys(missing))
		return nil, &jsonrpc.Error{Code: errMissingCapability.Code, Data: mustMarshal(map[string]any{"requiredCapabilities": missing}),
			Message: fmt.Sprintf("%s needs input the client did not declare it can give: capabilities %s missing from %s", method, strings.Join(names, ", "), metaClientCaps)}
	}
	res := map[string]any{"resultType": "input_required"}
	if len(r.Requests) > 0 {
		res["inputRequests"] = r.Requests
	}
	if r.State != "" {
		res["requestState"] = r.State
	}
	return mustMarshal(res), nil
}

// requiredCapability is the client capability an input request needs, and
// for elicitation the mode (form unless the params say url).
func requiredCapability(req fakeAsk) (capability, mode string) {
	switch req.Method {
	case "elicitation/create":
		var p struct {
			Mode string `json:"mode"`
		}
		json.Unmarshal(req.Params, &p)
		if p.Mode == "url" {
			return "elicitation", "url"
		}
		return "elicitation", "form"
	case "sampling/createMessage":
		return "sampling", ""
	case "roots/list":
		return "roots", ""
	}
	return "", ""
}

// declares reports whether clientCapabilities declare a capability (and
// mode): "elicitation": {} declares form mode.
func declares(caps map[string]json.RawMessage, capability, mode string) bool {
	raw, ok := caps[capability]
	if !ok {
		return false
	}
	if mode == "" {
		return true
	}
	var modes map[string]json.RawMessage
	json.Unmarshal(raw, &modes)
	_, form := modes["form"]
	_, url := modes["url"]
	if mode == "form" {
		return form || !url
	}
	return url
}

// askFunc sends a request to the client and returns its answer.
type askFunc func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)

// inputByRequests plays the rounds to a legacy client, a real request per
// input request (in key order), and returns the last round's answers. A
// failed request's answer is {"error": MESSAGE}.
func inputByRequests(ctx context.Context, rounds []fakeRound, ask askFunc) (json.RawMessage, error) {
	var answers map[string]json.RawMessage
	for _, r := range rounds {
		answers = map[string]json.RawMessage{}
		for _, key := range slices.Sorted(maps.Keys(r.Requests)) {
			req := r.Requests[key]
			res, err := ask(ctx, req.Method, req.Params)
			if errors.Is(err, context.Canceled) || ctx.Err() != nil {
				return nil, context.Canceled // the request was cancelled
			}
			if err != nil {
				res = mustMarshal(map[string]string{"error": err.Error()})
			}
			answers[key] = res
		}
	}
	return mustMarshal(answers), nil
}

// inputEcho is the text of the final answer.
func (f *fake) inputEcho(name string, answers json.RawMessage) string {
	canon, err := canonical(answers)
	if err != nil {
		canon = answers
	}
	return fmt.Sprintf("%s/%s inputResponses %s", f.spec.Name, name, canon)
}

// serveInput serves a request to something with rounds, in either era: the
// input_required result to send, or the final text.
func (f *fake) serveInput(ctx context.Context, method, name string, rounds []fakeRound, params json.RawMessage, ask askFunc) (res json.RawMessage, text string, err error) {
	if env := envelopeFrom(ctx); env != nil {
		res, answers, err := f.inputStep(env, method, rounds, params)
		if err != nil || res != nil {
			return res, "", err
		}
		return nil, f.inputEcho(name, answers), nil
	}
	if ask == nil {
		return nil, "", jsonrpc.Errorf(jsonrpc.ErrInternal, "%s: %s has input, which a legacy request over -http gets for tools/call only", method, name)
	}
	answers, err := inputByRequests(ctx, rounds, ask)
	if err != nil {
		return nil, "", err
	}
	return nil, f.inputEcho(name, answers), nil
}
