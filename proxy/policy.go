package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/internal/pin"
	"github.com/mcpgate/mcpgate/internal/rawjson"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/policy"
)

// Policies decide what clients may see and do, per server (DESIGN D9). They
// act where the method tables route: on a request after it is routed and
// before it goes upstream, on the answer before it reaches the client, and
// on each item of a list when the list is fetched (the outcome is cached
// with the list, so a client listing costs nothing more). A server's
// tools/prompts filters (allow, deny, rename, describe) act at the same
// places, as the policy named "tools" (or "prompts").

// errDenied is the code of a request a policy refused (other than
// tools/call, which is answered with a tool result that says why, so that
// the model can adapt).
var errDenied = &jsonrpc.Error{Code: -32003, Message: "denied by policy"}

// serverPolicies is what the config says one server's clients may see and do.
type serverPolicies struct {
	chain   policy.Chain
	filters [numKinds]*config.Filter // tools, prompts; nil: none
	pin     string                   // config.PinOff, PinOn or PinWarn
	lock    *pin.Lock                // the pinned definitions; nil when pin is off
	names   [numKinds]atomic.Pointer[policyNames]
	kept    [numKinds]atomic.Pointer[listOutcome] // the last list's outcome (listsoutcome.go)
}

// compilePolicies makes every server's policies: the config's entries that
// apply to it, then the program's own (Options.Policies).
func compilePolicies(cfg *config.Config, extra []policy.Policy, env policy.Env) (map[string]*serverPolicies, error) {
	out := map[string]*serverPolicies{}
	var problems config.ErrorList
	lock, err := readLock(cfg)
	if err != nil {
		return nil, err
	}
	for _, s := range cfg.Enabled() {
		chain, err := policy.Compile(cfg.EffectivePolicies(s), env)
		if err != nil {
			if list, ok := err.(config.ErrorList); ok {
				problems = append(problems, list...)
				continue
			}
			return nil, err
		}
		sp := &serverPolicies{chain: append(chain, extra...), pin: cfg.EffectivePin(s)}
		if sp.pin != config.PinOff {
			sp.lock = lock
		}
		if !s.Tools.Empty() {
			sp.filters[kindTools] = &s.Tools
		}
		if !s.Prompts.Empty() {
			sp.filters[kindPrompts] = &s.Prompts
		}
		out[s.Name] = sp
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return out, nil
}

// denial is a request refused by a policy.
type denial struct {
	record policy.Record
}

func (d *denial) Error() string {
	return fmt.Sprintf("denied by mcpgate policy %q: %s", d.record.Policy, d.record.Reason)
}

// wire is the JSON-RPC error a denial is for a method other than tools/call.
func (d *denial) wire() *jsonrpc.Error { return jsonrpc.Errorf(errDenied, "%s", d.Error()) }

// toolResult is the tools/call answer to a denial: a tool result with
// isError, whose text names the policy and the reason.
func (d *denial) toolResult() json.RawMessage {
	return mustJSON(map[string]any{
		"content": []any{map[string]string{"type": "text", "text": d.Error()}},
		"isError": true,
	})
}

// withheld is an item a policy or filter kept from a list: a call to it is
// refused with the same reason.
type withheld struct {
	policy string
	reason string
}

// checkRequest runs a server's policies on a routed request: the filter
// (and what list policies withheld), then the chain at the Request stage.
// It returns the params to send, or a denial.
func (s *session) checkRequest(ctx context.Context, rt route, k kind, method, name string, params json.RawMessage, rec *auditRecord) (json.RawMessage, error) {
	sp := rt.up.base.policies.Load()
	if sp == nil {
		return params, nil
	}
	if w, ok := rt.up.base.withheldItem(k, rt.name); ok {
		d := &denial{policy.Record{Policy: w.policy, Action: "deny", Where: "request", Reason: w.reason}}
		rec.Decisions = append(rec.Decisions, d.record)
		return nil, d
	}
	if f := sp.filters[k]; f != nil && !f.Allows(rt.name) {
		d := &denial{policy.Record{Policy: kindPolicy(k), Action: "deny", Where: "request", Reason: fmt.Sprintf("the operator does not allow %s %q of server %q", kindNoun[k], rt.name, rt.up.name)}}
		rec.Decisions = append(rec.Decisions, d.record)
		return nil, d
	}
	out, err := s.runChain(ctx, sp.chain, policy.Request, rt, k, method, name, params, rec)
	if err == nil && !sameTarget(out, params, method) {
		// A policy that changes params must not change where they go: the
		// route was decided on the name the client gave.
		d := &denial{policy.Record{Policy: "mcpgate", Action: "deny", Where: "request", Reason: fmt.Sprintf("a policy changed which %s this request names; it is refused rather than sent elsewhere", kindNoun[k])}}
		rec.Decisions = append(rec.Decisions, d.record)
		return nil, d
	}
	return out, err
}

// sameTarget reports whether modified params still name what params did
// (the tool or prompt name, the URI, the completion's ref).
func sameTarget(out, params json.RawMessage, method string) bool {
	if string(out) == string(params) {
		return true
	}
	key := map[string]string{methodToolsCall: "name", methodPromptsGet: "name", methodResourcesRead: "uri"}[method]
	if key == "" {
		ref := func(p json.RawMessage) string {
			ms, err := rawjson.Members(p)
			if err != nil {
				return ""
			}
			v, _ := ms.Get("ref")
			return string(v)
		}
		return ref(out) != "" && ref(out) == ref(params)
	}
	_, before, err1 := stringParam(params, key)
	_, after, err2 := stringParam(out, key)
	return err1 == nil && err2 == nil && before == after
}

// checkResult runs a server's policies on the answer to a routed request.
func (s *session) checkResult(ctx context.Context, rt route, k kind, method, name string, result json.RawMessage, rec *auditRecord) (json.RawMessage, error) {
	sp := rt.up.base.policies.Load()
	if sp == nil {
		return result, nil
	}
	return s.runChain(ctx, sp.chain, policy.Result, rt, k, method, name, result, rec)
}

func (s *session) runChain(ctx context.Context, chain policy.Chain, stage policy.Stage, rt route, k kind, method, name string, msg json.RawMessage, rec *auditRecord) (json.RawMessage, error) {
	if !chain.Acts(stage) {
		return msg, nil
	}
	in := &policy.Input{Stage: stage, Session: s.id, Stateless: s.stateless, Client: s.client, Server: rt.up.name, Method: method, Kind: kindNoun[k], Name: name, UpstreamName: rt.name, Message: msg}
	if stage == policy.Result {
		in.Prescan = rt.up.prescan.take(msg) // see prescan.go
	}
	var out json.RawMessage
	var records []policy.Record
	var denied *policy.Record
	if stage == policy.Result && rec.decideLater && rec.rest == nil && s.g.reserveLate(len(msg)) {
		out, records, denied, rec.rest = chain.RunAhead(ctx, in) // see decidelater.go
		if rec.rest == nil {
			s.g.lateBytes.Add(-int64(len(msg)))
		} else {
			rec.lateBytes = int64(len(msg))
		}
	} else {
		out, records, denied = chain.Run(ctx, in)
	}
	rec.Decisions = append(rec.Decisions, records...)
	if denied != nil {
		return nil, &denial{*denied}
	}
	return out, nil
}

func kindPolicy(k kind) string {
	if k == kindPrompts {
		return "prompts"
	}
	return "tools"
}

// withheldItem reports whether the list policies withheld the configured
// server's item of kind k. (Guarded by base.mu.)
func (base *upstream) withheldItem(k kind, name string) (withheld, bool) {
	base.mu.Lock()
	defer base.mu.Unlock()
	w, ok := base.withheld[k][name]
	return w, ok
}

// applyListPolicies is the List stage, run on a list as it is fetched:
// the filter drops, renames and describes; the chain withholds or changes
// items. What is withheld is remembered, so that calls to it are refused;
// the decisions go to the audit trail and the metrics once per fetch.
func (u *upstream) applyListPolicies(ctx context.Context, k kind, items []item) []item {
	sp := u.base.policies.Load()
	if sp == nil {
		return items
	}
	chained := sp.chain.Acts(policy.List)
	if sp.filters[k] == nil && !chained && (sp.lock == nil || pinKind(k) == "") {
		return items
	}
	var peers map[string][]string
	if k == kindTools && chained {
		peers = u.g.live().names.peersOf(u.base)
	}
	repeats := sp.chain.Repeats(policy.List) // the last outcome may be kept (listsoutcome.go)
	if repeats {
		if o := sp.kept[k].Load(); o.answers(items, u.g.live().names, peers) {
			for _, i := range o.told {
				u.checkPin(k, items[i]) // the same answer, and its report (told once per definition, unless forgotten)
			}
			u.settleWithheld(k, o.held, o.records)
			return o.out
		}
	}
	var records []policy.Record
	held := map[string]withheld{}
	// out stays nil while every item so far goes on as it came: a list
	// the policies leave alone is not copied (a list of 5,020 tools was
	// 480 KB a fetch).
	var out []item
	// One input for the list, its item's fields set for each: Run does not
	// keep it or change it.
	in := policy.Input{Stage: policy.List, Server: u.name, Method: kinds[k].list, Kind: kindNoun[k], Peers: peers}
	namer := newPolicyNamer(sp, k, u, len(items))
	var told []int // the items not as pinned: told of again when the outcome is kept
	for i, it := range items {
		w, ok, notPinned := u.checkPin(k, it)
		if notPinned {
			told = append(told, i)
		}
		if ok {
			held[it.name] = w
			out = itemsSoFar(out, items, i)
			continue
		}
		if f := sp.filters[k]; f != nil {
			if !f.Allows(it.name) {
				held[it.name] = withheld{kindPolicy(k), fmt.Sprintf("the operator does not allow %s %q of server %q", kindNoun[k], it.name, u.name)}
				out = itemsSoFar(out, items, i)
				continue
			}
			it = describe(it, f, kinds[k].nameKey)
		}
		if chained {
			in.Name, in.UpstreamName, in.Message, in.Index = namer.name(i, it.shownName()), it.name, it.raw, i
			msg, recs, denied := sp.chain.Run(ctx, &in)
			records = append(records, recs...)
			if denied != nil {
				held[it.name] = withheld{denied.Policy, denied.Reason}
				out = itemsSoFar(out, items, i)
				continue
			}
			if string(msg) != string(it.raw) {
				if ms, err := rawjson.SplitValid(msg); err == nil {
					it.raw, it.members = msg, ms
				}
			}
		}
		if out == nil && !changedItem(it, items[i]) {
			continue
		}
		out = append(itemsSoFar(out, items, i), it)
	}
	if out == nil {
		out = itemsSoFar(items, items, 0) // items, and never nil, as a copy was not
	}
	namer.keep(sp)
	if repeats {
		sp.kept[k].Store(newListOutcome(items, namer.table, peers, out, held, records, told))
	}
	u.settleWithheld(k, held, records)
	return out
}

// settleWithheld makes held what the list policies withhold of the
// configured server's list of kind k, and records the decisions made on
// the list.
func (u *upstream) settleWithheld(k kind, held map[string]withheld, records []policy.Record) {
	base := u.base // what is withheld is the configured server's, whichever instance listed
	base.mu.Lock()
	if base.withheld[k] == nil {
		base.withheld[k] = map[string]withheld{}
	}
	for name := range base.withheld[k] {
		if _, still := held[name]; !still {
			delete(base.withheld[k], name)
		}
	}
	var fresh []string
	for name, w := range held {
		if _, seen := base.withheld[k][name]; !seen && w.policy != kindPolicy(k) {
			fresh = append(fresh, name)
		}
		base.withheld[k][name] = w
	}
	base.mu.Unlock()
	if len(fresh) > 0 {
		sort.Strings(fresh)
		u.log.Warn("policy withheld items from a list", "method", kinds[k].list, "names", strings.Join(fresh, ", "))
	}
	if len(records) > 0 {
		u.g.recordListDecisions(u, k, records)
	}
}

// itemsSoFar is out, or, while out is nil, a copy of items[:i]: the items
// before the first one the policies dropped or changed.
func itemsSoFar(out, items []item, i int) []item {
	if out != nil {
		return out
	}
	return append(make([]item, 0, len(items)), items[:i]...)
}

// changedItem reports whether the policies made it of was: another shown
// name or other bytes.
func changedItem(it, was item) bool {
	return it.shown != was.shown || len(it.raw) != len(was.raw) || (len(it.raw) > 0 && &it.raw[0] != &was.raw[0])
}

// describe applies a filter's rename and describe to one item.
func describe(it item, f *config.Filter, nameKey string) item {
	if shown, ok := f.Rename[it.name]; ok {
		it.shown = shown
	}
	if d, ok := f.Describe[it.name]; ok {
		raw := it.members.Replace(it.raw, "description", quote(d))
		if ms, err := rawjson.SplitValid(raw); err == nil {
			it.raw, it.members = raw, ms
		}
	}
	return it
}

// recordListDecisions puts the decisions made on a list into the audit
// trail (one record for the fetch, by the gateway) and the metrics.
func (g *Gateway) recordListDecisions(u *upstream, k kind, records []policy.Record) {
	rec := &auditRecord{Session: "mcpgate", Method: kinds[k].list, Server: u.name, ID: json.RawMessage("null"), Outcome: "ok", Decisions: records}
	g.metrics.observeDecisions(records)
	g.audit.write(rec)
}

// readLock loads the lock file when any server is pinned. A lock that does
// not exist yet is empty: every pinned server's definitions are then new.
func readLock(cfg *config.Config) (*pin.Lock, error) {
	pinned := false
	for _, s := range cfg.Enabled() {
		pinned = pinned || cfg.EffectivePin(s) != config.PinOff
	}
	if !pinned {
		return nil, nil
	}
	lock, err := pin.Read(cfg.LockPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return lock, nil
}

// pinKind is what the lock calls items of kind k; "" for kinds not pinned.
func pinKind(k kind) string {
	switch k {
	case kindTools:
		return "tool"
	case kindPrompts:
		return "prompt"
	}
	return ""
}

// checkPin holds a definition to the lock: one that changed since it was
// pinned, or that the lock does not know, is withheld (pin "warn": only
// reported). The operator is told once per change: a log line and an audit
// event naming the server, the item and the fields that changed. told:
// the definition is not as pinned (reportPin was called).
func (u *upstream) checkPin(k kind, it item) (w withheld, held, told bool) {
	sp := u.base.policies.Load()
	if sp.lock == nil || pinKind(k) == "" {
		return withheld{}, false, false
	}
	status, fields, err := sp.lock.Check(u.name, pinKind(k), it.raw)
	var why string
	switch {
	case err != nil:
		why = fmt.Sprintf("its definition cannot be pinned: %v", err)
	case status == pin.Same:
		return withheld{}, false, false
	case status == pin.Changed:
		why = fmt.Sprintf("its definition changed since it was pinned (%s); the operator must review it (mcpgate lock -diff) and accept it (mcpgate lock -update)", strings.Join(fields, ", "))
	case !sp.lock.HasServer(u.name):
		why = fmt.Sprintf("server %q is not in the lock file, so none of its definitions was reviewed (mcpgate lock -update)", u.name)
	default:
		why = "it is not in the lock file: it is new since the definitions were pinned (mcpgate lock -diff, then mcpgate lock -update)"
	}
	reason := fmt.Sprintf("%s %q of server %q is withheld: %s", kindNoun[k], it.name, u.name, why)
	if sp.pin == config.PinWarn {
		reason = fmt.Sprintf("%s %q of server %q is not as pinned (pin is \"warn\": it is shown anyway): %s", kindNoun[k], it.name, u.name, why)
	}
	u.g.reportPin(u, k, it, fields, reason)
	if sp.pin == config.PinWarn {
		return withheld{}, false, true
	}
	return withheld{"pin", reason}, true, true
}

// reportPin tells the operator of a definition not as pinned, once per
// definition (a definition that changes again is told again).
func (g *Gateway) reportPin(u *upstream, k kind, it item, fields []string, reason string) {
	key := pinReport{u.base, k, it.name}
	sum := sha256.Sum256(it.raw)
	g.mu.Lock()
	told, known := g.pinReported[key]
	if !known && (g.pinReported == nil || len(g.pinReported) >= maxPinReported) {
		// Past the bound, everything told is forgotten (and told once
		// more if seen again): a server's names are its own to make up.
		// Only a new name makes room: a server withholding more than the
		// bound would otherwise have all of them told at every fetch.
		g.pinReported = map[pinReport][32]byte{}
	}
	seen := known && told == sum
	g.pinReported[key] = sum
	g.mu.Unlock()
	if seen {
		return
	}
	u.log.Warn("definition not as pinned", "kind", kindNoun[k], "name", it.name, "fields", strings.Join(fields, ","), "reason", reason)
	rec := policy.Record{Policy: "pin", Action: "deny", Where: "list", Reason: reason}
	if sp := u.base.policies.Load(); sp != nil && sp.pin == config.PinWarn {
		rec.Action = "audit"
	}
	g.metrics.observeDecisions([]policy.Record{rec})
	if fields == nil {
		fields = []string{} // new: not in the lock
	}
	g.audit.event("pin_violation", "server", u.name, "kind", kindNoun[k], "name", it.name, "fields", fields, "action", rec.Action, "reason", reason)
}

// maxPinReported bounds the definitions remembered as told of.
const maxPinReported = 1 << 14

type pinReport struct {
	up   *upstream
	k    kind
	name string
}

// closePolicies ends what policies keep running (an exec policy's
// persistent program).
func (g *Gateway) closePolicies() {
	for _, u := range g.live().upstreams {
		if sp := u.policies.Load(); sp != nil {
			closeChain(sp.chain)
		}
	}
}

func closeChain(chain policy.Chain) {
	for _, p := range chain {
		if c, ok := p.(io.Closer); ok {
			c.Close()
		}
	}
}
