package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Merged lists: what a client gets for tools/list, prompts/list,
// resources/list and resources/templates/list.

// listHandler serves a merged list: in one page, or in pages of the
// configured size.
func listHandler(k kind) func(*session, context.Context, json.RawMessage, *auditRecord) (json.RawMessage, error) {
	return func(s *session, ctx context.Context, params json.RawMessage, rec *auditRecord) (json.RawMessage, error) {
		var p struct {
			Cursor *string `json:"cursor"`
		}
		if len(params) > 0 {
			json.Unmarshal(params, &p)
		}
		modern := envelopeOf(ctx) != nil
		if s.g.live().cfg.PageSize > 0 && p.Cursor != nil {
			rec.Server = "mcpgate"
			res, hint, err := s.pagedList(nil, k, p.Cursor)
			if err != nil || !modern {
				return res, err
			}
			return s.g.finishOwnResult(res, hint), nil
		}
		if p.Cursor != nil {
			return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "unknown cursor %q: mcpgate returns every %s in one page", *p.Cursor, kindNoun[k])
		}
		results := s.g.fetchAll(ctx, k)
		rec.Server = "*"
		for _, r := range results {
			if r.err == nil && !r.skipped {
				rec.Servers = append(rec.Servers, r.up.name)
			}
		}
		var res json.RawMessage
		hint := mergedHint(results)
		if s.g.live().cfg.PageSize > 0 {
			var err error
			if res, hint, err = s.pagedList(results, k, nil); err != nil {
				return nil, err
			}
		} else {
			res, _, _ = s.g.merge(k, results)
		}
		res = s.reportMissing(ctx, k, results, res)
		if meta, ok := cachedMeta(results); ok {
			res = setMeta(res, meta)
		}
		if modern {
			res = s.g.finishOwnResult(res, hint)
		}
		return res, nil
	}
}

// reportMissing tells the client which servers a list lacks, so that
// nothing is dropped silently: the result's _meta names them with the
// reason, and a warning log message says it in words.
func (s *session) reportMissing(ctx context.Context, k kind, results []listResult, res json.RawMessage) json.RawMessage {
	type missing struct {
		Server string `json:"server"`
		Reason string `json:"reason"`
	}
	var gone []missing
	for _, r := range results { // every configured server has a result
		if r.err != nil {
			gone = append(gone, missing{r.up.name, s.g.redact(r.err.Error())})
		}
	}
	if len(gone) == 0 {
		return res
	}
	var words []string
	for _, m := range gone {
		words = append(words, m.Server)
		s.g.log.Warn("list incomplete", "method", kinds[k].list, "server", m.Server, "reason", m.Reason)
	}
	s.logToClient(ctx, "warning", fmt.Sprintf("%s is missing what these servers offer, because they are unavailable: %s", kinds[k].list, strings.Join(words, ", ")))
	return setMeta(res, metaPair{metaUnavailable, mustJSON(gone)})
}
