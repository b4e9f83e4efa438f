package proxy

// Decisions made after the answer left. On a big tool result the policies
// that only record (a built-in detector with the action "audit": the
// default injection policy) change nothing the client gets, yet the
// answer waited for them: about 60% of the default policies' CPU on a
// 10 MiB result. Where the call is finished on a goroutine of its own (an
// inline call's second half, see inline.go) and its record may be written
// without waiting (auditNeverWaits: never with audit.sync "always", whose
// record is on disk before the answer), they are left running
// (policy.Chain.RunAhead): the answer goes as soon as every policy that
// could change or refuse it has decided. The same goroutine then waits
// for the rest, counts their decisions (the call itself was counted with
// its answer) and writes the call's record with them. The gateway owns
// that wait: Close waits for it (background) before the audit trail
// closes, so a shutdown right after the answer loses no record. Meanwhile
// the result's bytes stay alive and unchanged (the record holds them;
// nothing writes into them). A call served by Handle has no place to run
// anything after its answer is handed to the connection: its decisions
// are all made first.

// lateBudget is how many bytes of results the decisions left running may
// hold at once, all calls together: twice the largest message, and 64 MiB
// at least. Each holds its result (and its decoding) until it is made; a
// client that asks for big results back to back is answered each time
// before the scan ends, so without a bound the scans it leaves behind
// would pile up. Past it, a call's decisions are all made before its
// answer, as they were.
func (g *Gateway) lateBudget() int64 {
	return max(64<<20, 2*int64(g.live().cfg.MaxMessage))
}

// reserveLate takes n bytes of the budget for a result whose decisions
// may be left running; false when they would pass it.
func (g *Gateway) reserveLate(n int) bool {
	if g.lateBytes.Add(int64(n)) > g.lateBudget() {
		g.lateBytes.Add(-int64(n))
		return false
	}
	return true
}

// recordsAfterAnswer reports whether rec is to be recorded after its
// answer is handed over (recordDecided), its decisions left running: only
// while mcpgate is not stopping, which otherwise waits for them here.
func (g *Gateway) recordsAfterAnswer(rec *auditRecord) bool {
	if rec.rest == nil {
		return false
	}
	if g.addBackground() {
		return true
	}
	rec.Decisions = append(rec.Decisions, rec.rest()...)
	rec.rest = nil
	g.lateBytes.Add(-rec.lateBytes)
	return false
}

// recordDecided waits for the decisions left running on rec's answer, and
// records it with them: called once the answer was handed over, when
// recordsAfterAnswer said so.
func (g *Gateway) recordDecided(rec *auditRecord) {
	defer g.background.Done()
	records := rec.rest()
	rec.rest = nil
	g.lateBytes.Add(-rec.lateBytes)
	rec.Decisions = append(rec.Decisions, records...)
	g.metrics.observeDecisions(records)
	g.audit.write(rec)
}
