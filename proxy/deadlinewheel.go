package proxy

import (
	"sync"
	"time"
)

// deadlineWheel runs the deadlines of one upstream's requests on one timer,
// set for the earliest of them. A timer per request cost, on every call,
// its allocation, two operations on the runtime's timer heap (set, and
// stopped once answered) and a clock read in the scheduler of each
// processor holding one; nearly every request is answered long before its
// deadline, so here it costs an entry in a map, and the timer is touched
// only when a request's deadline comes before every other's (rarely: they
// all run for the same timeout) and when it fires.
type deadlineWheel struct {
	mu    sync.Mutex
	armed map[*deadline]armedAt
	timer *time.Timer // calls sweep at next; nil until first needed
	next  time.Time   // when timer fires; zero when it is not set
}

// armedAt is when an armed deadline passes, and which arming of it that
// was (see deadline.seq): a deadline re-armed or stopped after a sweep took
// it does not fire for the old one.
type armedAt struct {
	at  time.Time
	seq uint64
}

// arm has d passed at at, replacing any earlier arming.
func (w *deadlineWheel) arm(d *deadline, at time.Time, seq uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.armed == nil {
		w.armed = make(map[*deadline]armedAt)
	}
	w.armed[d] = armedAt{at, seq}
	if w.next.IsZero() || at.Before(w.next) {
		w.setLocked(at)
	}
}

// disarm forgets d. The timer is left as it is: when it fires it finds
// nothing due, and is set for what is left.
func (w *deadlineWheel) disarm(d *deadline) {
	w.mu.Lock()
	delete(w.armed, d)
	w.mu.Unlock()
}

// setLocked sets the timer for at. w.mu held.
func (w *deadlineWheel) setLocked(at time.Time) {
	w.next = at
	wait := time.Until(at)
	if w.timer == nil {
		w.timer = time.AfterFunc(wait, w.sweep)
		return
	}
	w.timer.Reset(wait)
}

// sweep passes every deadline that is due, outside the lock, and sets the
// timer for the earliest of the others.
func (w *deadlineWheel) sweep() {
	now := time.Now()
	type due struct {
		d   *deadline
		seq uint64
	}
	var passed []due
	w.mu.Lock()
	w.next = time.Time{}
	var earliest time.Time
	for d, a := range w.armed {
		if !now.Before(a.at) {
			d.taken.Add(1)
			passed = append(passed, due{d, a.seq})
			delete(w.armed, d)
			continue
		}
		if earliest.IsZero() || a.at.Before(earliest) {
			earliest = a.at
		}
	}
	if !earliest.IsZero() {
		w.setLocked(earliest)
	}
	w.mu.Unlock()
	for _, p := range passed {
		p.d.passed(p.seq)
	}
}
