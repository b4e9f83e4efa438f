package httpfront

import (
	"container/list"
	"log/slog"
	"sync"
)

// keptNotesBytes bounds the notifications kept for all of a front's
// sessions together while they have no GET stream open. Each session keeps
// at most backlogBytes, but at max_sessions idle sessions each holding its
// share of the same broadcast log messages, that was a gigabyte. Past it,
// the session that has kept notifications longest (the likeliest to be
// gone) loses its oldest first.
const keptNotesBytes = 64 << 20

// keptNotes accounts for the notifications a front's sessions keep for
// their GET streams. Lock order: a stream's mu, then this mu; never a
// stream's mu under this one.
type keptNotes struct {
	limit int // zero: keptNotesBytes

	mu      sync.Mutex
	total   int                           // bytes kept, all sessions
	order   list.List                     // of *httpStream keeping notifications, the one keeping longest first
	where   map[*httpStream]*list.Element // its place in order
	over    bool                          // an episode of drops is under way (logged at its start)
	dropped int                           // notifications dropped in this episode
}

func (k *keptNotes) max() int {
	if k.limit > 0 {
		return k.limit
	}
	return keptNotesBytes
}

// add counts n more bytes kept by st. st.mu held. It returns how many
// notifications the episode of drops that ends now cost (it ends when what
// is kept is back under half the bound), for the caller to log.
func (k *keptNotes) add(st *httpStream, n int) (episodeDropped int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.total += n
	if k.where == nil {
		k.where = map[*httpStream]*list.Element{}
	}
	if _, ok := k.where[st]; !ok {
		k.where[st] = k.order.PushBack(st)
	}
	if k.over && k.total <= k.max()/2 {
		k.over = false
		episodeDropped, k.dropped = k.dropped, 0
	}
	return episodeDropped
}

// release gives back n bytes st kept; none says st keeps no notification
// now. st.mu held.
func (k *keptNotes) release(st *httpStream, n int, none bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.total -= n
	if e, ok := k.where[st]; ok && none {
		k.order.Remove(e)
		delete(k.where, st)
	}
}

// victim is the stream to take notifications from, nil while everything
// fits; first says this starts an episode of drops.
func (k *keptNotes) victim() (st *httpStream, first bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.total <= k.max() || k.order.Len() == 0 {
		return nil, false
	}
	first = !k.over
	k.over = true
	return k.order.Front().Value.(*httpStream), first
}

func (k *keptNotes) overLimit() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.total > k.max()
}

// trim drops the oldest notifications of the sessions keeping them longest
// until what all keep fits. No stream's mu may be held.
func (k *keptNotes) trim(log *slog.Logger) {
	for {
		st, first := k.victim()
		if st == nil {
			return
		}
		if first {
			log.Warn("HTTP sessions without a GET stream keep the most mcpgate keeps for all sessions: their oldest notifications are dropped, from the sessions keeping them longest, until what is kept fits", "max_bytes", k.max())
		}
		st.mu.Lock()
		st.dropOldestNotes(k)
		st.mu.Unlock()
	}
}

// dropOldestNotes drops st's oldest notifications while all sessions keep
// more than k's bound. st.mu held.
func (st *httpStream) dropOldestNotes(k *keptNotes) {
	for st.noteBytes > 0 && k.overLimit() {
		for !st.backlog[st.oldestNote].note || st.backlog[st.oldestNote].dropped {
			st.oldestNote++
		}
		p := &st.backlog[st.oldestNote]
		n := len(p.msg)
		st.noteBytes -= n
		st.backlogBytes -= n
		*p = pending{dropped: true}
		st.oldestNote++
		k.mu.Lock()
		k.dropped++
		k.mu.Unlock()
		k.release(st, n, st.noteBytes == 0)
		st.leaveHole()
	}
	if st.noteBytes == 0 {
		k.release(st, 0, true) // keeps none: another is the victim now
	}
}

// keepNote counts a notification st keeps (st.mu held); false when the
// session has ended, and nobody will read it.
func (st *httpStream) keepNote(n int) (ok bool, episodeDropped int) {
	select {
	case <-st.ended:
		return false, 0
	default:
	}
	st.noteBytes += n
	if st.kept != nil {
		episodeDropped = st.kept.add(st, n)
	}
	return true, episodeDropped
}

// forgetNotes gives back what st kept, now gone (to its GET stream, or
// with the session). st.mu held.
func (st *httpStream) forgetNotes() {
	if st.kept != nil && st.noteBytes > 0 {
		st.kept.release(st, st.noteBytes, true)
	}
	st.noteBytes, st.oldestNote = 0, 0
}
