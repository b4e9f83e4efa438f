package policy

import (
	"context"
	"encoding/json"
)

// A big result waited for every decision on it, those that can only record
// too: with the default set, the injection policy (action "audit") took
// about 60% of the policies' CPU on a 10 MiB result of JSON, logs and
// prose, and the result waited for it, although whatever it found changes
// nothing the client gets. RunAhead lets such decisions, started early on
// the message as it came (concurrent.go), go on deciding while the caller
// hands the message on.

// RunAhead is Run for a caller that can hand the message on before every
// decision on it is made, and record the rest later. It returns what Run
// returns, but for the decisions it left running: rest, if not nil, waits
// for them and returns their records, which follow records in the
// chain's order. rest is nil when nothing was left running (on a Deny, it
// always is).
//
// A decision is left running only when it cannot change or refuse the
// message: a built-in detector policy whose action is "audit" (Allow or
// Audit only), whose decision was started early on the message as given
// (a big one, see concurrentMin), that no policy before it modified, and
// that only such policies follow in the chain (of those acting at the
// stage). A Modify or Deny before it, or a policy after it that may make
// one, keeps every decision in turn, as Run makes them.
//
// The caller promises to call rest exactly once (a second call panics),
// and to keep in.Message alive and unchanged until then: the decisions
// left running read it. Until rest returns, goroutines of the chain's are
// still running; the caller owns them.
func (c Chain) RunAhead(ctx context.Context, in *Input) (msg json.RawMessage, records []Record, denied *Record, rest func() []Record) {
	return c.run(ctx, in, true)
}

// onlyRecords reports whether p's decision can only be Allow or Audit:
// a built-in detector policy with the action "audit" (one that cannot read
// the message audits that too, see unreadable).
func onlyRecords(p Policy) bool {
	t, ok := p.(*textScan)
	return ok && t.action == actionAudit
}

// leftFrom returns the index in c from which every policy acting on stage
// may be left deciding (see RunAhead), len(c) when none may: the longest
// tail of such policies among those that decide early (every one acting
// after the first, see decideEarly).
func leftFrom(c Chain, stage Stage) int {
	from, first := len(c), -1
	for i, p := range c {
		if acts(p, stage) {
			first = i
			break
		}
	}
	for i := len(c) - 1; i > first; i-- {
		p := c[i]
		if !acts(p, stage) {
			continue
		}
		if !decidesAlone(p) || !onlyRecords(p) {
			break
		}
		from = i
	}
	return from
}

// restOf is RunAhead's rest: it starts the decisions held for it (see
// decideEarly), waits for every decision started early (those before from
// were waited for by the run already) and returns the records of those
// from from on, in the chain's order.
func (c Chain) restOf(ahead []*early, from int, stage Stage, startHeld, wait func()) func() []Record {
	called := false
	return func() []Record {
		if called {
			panic("policy: RunAhead's rest called twice: its decisions were recorded already")
		}
		called = true
		startHeld()
		wait()
		var records []Record
		for i := from; i < len(c); i++ {
			if e := ahead[i]; e != nil && e.decision.Action != Allow {
				records = append(records, recordOf(c[i], e.decision, stage))
			}
		}
		return records
	}
}
