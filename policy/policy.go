// Package policy decides what agents may see and do through the gateway:
// which arguments may go to a server, which secrets and personal data may
// cross, which tool definitions may be shown. A policy sees one message
// with its context and returns a decision: allow, audit (allow, and record
// what was found), modify (with the new message) or deny (with a reason
// that is safe to show the client).
//
// Policies act at three stages: on a client's request after it is routed
// and before it goes upstream, on the upstream's answer before it reaches
// the client, and on each item of a list (a tool, prompt, resource or
// template definition). The gateway runs the policies that apply to a
// server as a Chain, in the order the config gives them.
//
// The built-in policies are made from config entries by Compile. A program
// that vendors mcpgate adds its own by implementing Policy and passing it
// in proxy.Options.
package policy

import (
	"context"
	"encoding/json"
	"log/slog"
)

// Stage is where a policy acts.
type Stage uint8

const (
	// Request is a client's request, after routing, before it goes
	// upstream: Input.Message is its params.
	Request Stage = iota + 1
	// Result is a server's answer, before it reaches the client:
	// Input.Message is the result.
	Result
	// List is one item of a list: Input.Message is its definition (a tool,
	// prompt, resource or resource template, as the server sent it).
	List
)

func (s Stage) String() string {
	switch s {
	case Request:
		return "request"
	case Result:
		return "result"
	case List:
		return "list"
	}
	return "stage?"
}

// Action is what a decision does.
type Action uint8

const (
	// Allow: nothing to say.
	Allow Action = iota
	// Audit: allowed, and worth recording (what was found, by kind).
	Audit
	// Modify: Decision.Message goes on instead of the input's.
	Modify
	// Deny: refused; Decision.Reason says why.
	Deny
)

func (a Action) String() string {
	switch a {
	case Allow:
		return "allow"
	case Audit:
		return "audit"
	case Modify:
		return "modify"
	case Deny:
		return "deny"
	}
	return "action?"
}

// Input is one message a policy decides on, with its context. Its
// Message is the policy's to read during Decide only: it must not keep it
// or change it in place.
type Input struct {
	Stage   Stage
	Session string // the client session's id
	Server  string // the configured server: its name in the config
	// Stateless says the request belongs to no session (a 2026-07-28
	// request over HTTP): Session names a session made for it alone, new
	// with every request, so it tells nothing about who sent it. Limits
	// kept per session count such requests by Client instead.
	Stateless bool
	// Client names who sent the request as the transport authenticated it
	// (over HTTP, "bearer:" and the SHA-256 of its token); empty when the
	// transport cannot tell clients apart. It is a name, never a secret.
	Client string
	// Method is the MCP method: for Request and Result tools/call,
	// prompts/get, resources/read or completion/complete; for List the
	// list method (tools/list, prompts/list, resources/list,
	// resources/templates/list).
	Method string
	// Kind is what Name names: "tool", "prompt", "resource" (a URI) or
	// "resource template".
	Kind string
	// Name is the tool, prompt or URI as the client names it
	// ("fs__read_file"); UpstreamName as the server does ("read_file").
	Name         string
	UpstreamName string
	Message      json.RawMessage
	// Peers, at the List stage of tools, are the tools of every server
	// (this one's too), by server: what a definition may shadow. The map
	// and its slices are shared by every list until a name changes, and
	// known by their identity: read them only.
	Peers map[string][]string
	// Index, at the List stage, is the item's place in the server's list
	// (0 the first): a list like the last one is checked place by place,
	// and a definition given in the same bytes as last time (Message is
	// never changed once given) is known without reading them.
	Index int
	// Prescan, if not nil, is the chain's prescan (Chain.Prescan) of the
	// line Message is in, finished: Message must then be a value of that
	// line (a response's result), in its memory. Run uses what it decoded
	// and found instead of doing it again, for exactly those bytes and the
	// policies it ran for; anything else is decided as without it.
	Prescan *Prescan
	// shared: the strings of a big Message, decoded once for the text
	// scans that decide on it side by side (sharedstrings.go).
	shared *sharedStrings
	// background: the decision is made after the message was handed on
	// (RunAhead's rest), and nobody waits for it: its scans keep to one
	// core (detect.Alone), leaving the others to the work that is waited
	// for.
	background bool
}

// Finding is how often one kind of thing (a secret's kind, "email", an
// injection marker) was found.
type Finding struct {
	Kind  string
	Count int
}

// Decision is a policy's answer.
type Decision struct {
	Action Action
	// Message is what goes on instead of the input's (Modify only).
	Message json.RawMessage
	// Reason says why, for a Deny (the client sees it: it must never
	// repeat a matched secret), or what was done, for Modify and Audit
	// (the audit trail keeps it).
	Reason string
	// Findings are what was found, by kind, for the audit trail and the
	// metrics.
	Findings []Finding
}

// Policy decides on messages.
//
// Stages says where it acts; Decide is called only for those. Decide is
// called concurrently; it must return promptly: a policy that waits on
// something outside mcpgate (an external program) bounds the wait by ctx
// and by a timeout of its own.
type Policy interface {
	Name() string
	Stages() []Stage
	Decide(ctx context.Context, in *Input) Decision
}

// Record is a decision other than a plain allow, as the audit trail and the
// metrics keep it.
type Record struct {
	Policy string         `json:"policy"`
	Action string         `json:"action"` // "audit", "modify" or "deny"
	Where  string         `json:"where"`  // "request", "result" or "list"
	Kinds  map[string]int `json:"kinds,omitempty"`
	Reason string         `json:"reason,omitempty"`
}

// Chain is the policies that apply to one server, in order.
type Chain []Policy

// The stages of the policies that act on one, shared: Stages is asked for
// every message, and a new slice each time would be an allocation each.
// Nobody changes them.
var (
	requestStage = []Stage{Request}
	listStage    = []Stage{List}
)

// Run runs the chain on in: each policy sees the message as the ones
// before it left it, and the first Deny ends the run. It returns the
// message to go on with (in.Message when nothing changed), the records of
// every decision other than a plain allow, and the Deny's record, if any
// (the message then must not go on). It does not keep in: a caller may
// reuse it for the next run.
func (c Chain) Run(ctx context.Context, in *Input) (json.RawMessage, []Record, *Record) {
	msg, records, denied, _ := c.run(ctx, in, false)
	return msg, records, denied
}

// run is Run, and RunAhead when leave is set: it then returns, with rest,
// once only decisions that may be left running remain (see leftFrom).
func (c Chain) run(ctx context.Context, in *Input, leave bool) (_ json.RawMessage, _ []Record, _ *Record, rest func() []Record) {
	msg := in.Message
	var records []Record
	var step Input // what each policy is given: in, with the message as the policies before left it
	// The policies from from on are left deciding, when nothing before
	// modified the message.
	ahead, shared, from, wait, startHeld := c.decideEarly(ctx, in, in.Prescan.sharedFor(in.Message), leave)
	defer func() {
		if rest == nil {
			wait()
		}
	}()
	modified := false
	for i, p := range c {
		if i == from && !modified {
			return msg, records, nil, c.restOf(ahead, from, in.Stage, startHeld, wait)
		}
		if !acts(p, in.Stage) {
			continue
		}
		var d Decision
		if e := earlyAt(ahead, i); e != nil && !modified {
			<-e.done
			d = e.decision
		} else if !modified && shared == nil {
			d = decideOn(ctx, p, in) // in as given: a list's thousands of items are not copied each
		} else {
			step = *in
			step.Message = msg
			step.shared = shared // used only while msg is in.Message
			d = decideOn(ctx, p, &step)
		}
		if d.Action == Allow {
			continue
		}
		records = append(records, recordOf(p, d, in.Stage))
		switch d.Action {
		case Deny:
			return nil, records, &records[len(records)-1], nil
		case Modify:
			msg = d.Message
			modified = true
		}
	}
	return msg, records, nil, nil
}

// recordOf is the record of p's decision d (not a plain allow) at stage.
func recordOf(p Policy, d Decision, stage Stage) Record {
	r := Record{Policy: p.Name(), Action: d.Action.String(), Where: stage.String(), Reason: d.Reason}
	for _, f := range d.Findings {
		if r.Kinds == nil {
			r.Kinds = map[string]int{}
		}
		r.Kinds[f.Kind] += f.Count
	}
	return r
}

// decideOn is p.Decide(ctx, in), with the built-in policies called as
// themselves: they keep nothing of in, so it stays on Run's stack. Through
// the interface, in would be moved to the heap for every run, which for a
// list is every item of it (thousands per fetch). A program's own policy
// gets a copy of its own.
func decideOn(ctx context.Context, p Policy, in *Input) Decision {
	switch p := p.(type) {
	case *poisoning:
		return p.Decide(ctx, in)
	case *textScan:
		return p.Decide(ctx, in)
	}
	own := *in
	return p.Decide(ctx, &own)
}

// Acts reports whether the chain has a policy for stage: the gateway skips
// building inputs nobody reads.
func (c Chain) Acts(stage Stage) bool {
	for _, p := range c {
		if acts(p, stage) {
			return true
		}
	}
	return false
}

// Repeats reports whether the chain decides at stage from the input alone:
// given the same input again (its server, kind, name, message and peers),
// it decides the same, so that a caller may keep the outcome of a run for
// the same input. Only the built-in poisoning check promises it; a
// program's own policy or an external program may answer otherwise the
// next time.
func (c Chain) Repeats(stage Stage) bool {
	for _, p := range c {
		if !acts(p, stage) {
			continue
		}
		if _, ok := p.(*poisoning); !ok {
			return false
		}
	}
	return true
}

func acts(p Policy, stage Stage) bool {
	for _, s := range p.Stages() {
		if s == stage {
			return true
		}
	}
	return false
}

// Env is what the built-in policies are made with, besides their config
// entry.
type Env struct {
	// Logger receives what a policy has to say to the operator (an
	// external program that fails). Nil: slog.Default().
	Logger *slog.Logger
}
