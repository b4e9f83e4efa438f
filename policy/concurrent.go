package policy

import (
	"context"
	"sync"
)

// A big message (a tool result of megabytes) is scanned by every detector
// policy of the chain in turn, each in a full pass: with the default set,
// secrets then injection. Their passes are independent, so on a big
// message Run starts the later ones at once, on the message as it came,
// while the first one runs: the message waits for the slowest detector,
// not for all of them one after the other. The chain's meaning is kept:
// a policy decides on the message as the ones before it left it, so an
// early decision is used only if nobody before it changed the message
// (otherwise it is made again, in order), and after a Deny it is dropped.

// concurrentMin is the message size from which Run decides early: below
// it, a goroutine and its wait cost more than they save.
const concurrentMin = 256 << 10

// early is a decision being made ahead of its turn.
type early struct {
	done     chan struct{}
	decision Decision
}

// decidesAlone reports whether p's decision depends on nothing but its
// input, with no effect outside it: only then may it be made early (or
// made and dropped). The built-in detector policies; not a program's own
// policies, nor rate limits or external programs.
func decidesAlone(p Policy) bool {
	_, ok := p.(*textScan)
	return ok
}

// decideEarly starts, for a big message, the decisions of the policies
// after the first that acts on stage and may decide early. It returns
// them by index in c (nil where none was started), the message's strings
// that they and the first share (nil if none was started, or pre: those a
// prescan found), and a wait that returns once all of them are done: Run
// calls it before it returns, whatever happens, so that no decision
// outlives it.
//
// With leave (RunAhead), the decisions that RunAhead may leave running
// (the chain's tail of audit-only detectors, from left on; len(c) when
// none is) are made ready but held: startHeld starts them, and RunAhead's
// rest calls it before it waits. Started with the others, they took the CPU that the answer's own
// decisions and its write needed (on two cores, the injection scan's
// pieces ran beside the secrets scan and then beside the write of the
// answer), for a record nobody waits for. Started by rest, they keep to
// one core each (Input.background: detect.Alone), where the injection
// scan's pieces took both from the next call's read: a 10 MiB result of
// JSON, logs and prose, called back to back, took 62 ms a call with the
// default set, 54 with its audit on one core (bare: 36).
func (c Chain) decideEarly(ctx context.Context, in *Input, pre *sharedStrings, leave bool) (started []*early, shared *sharedStrings, left int, wait, startHeld func()) {
	left = len(c)
	if len(in.Message) < concurrentMin {
		return nil, pre, left, func() {}, func() {}
	}
	if leave {
		left = leftFrom(c, in.Stage)
	}
	shared = pre
	var wg sync.WaitGroup
	var held []func()
	first := true
	for i, p := range c {
		if !acts(p, in.Stage) {
			continue
		}
		if first {
			first = false
			continue
		}
		if !decidesAlone(p) {
			continue
		}
		if started == nil {
			started = make([]*early, len(c))
			if shared == nil {
				shared = &sharedStrings{msg: in.Message}
			}
		}
		e := &early{done: make(chan struct{})}
		started[i] = e
		own := *in // the goroutine's own: Run changes its step's message
		own.shared = shared
		own.background = i >= left
		decide := func() {
			defer close(e.done)
			e.decision = p.Decide(ctx, &own)
		}
		if i >= left {
			held = append(held, decide)
			continue
		}
		wg.Go(decide)
	}
	startHeld = func() {
		for _, decide := range held {
			wg.Go(decide)
		}
		held = nil
	}
	return started, shared, left, wg.Wait, startHeld
}

// earlyAt returns the decision started early for the policy at index i,
// if any.
func earlyAt(ahead []*early, i int) *early {
	if ahead == nil {
		return nil
	}
	return ahead[i]
}
