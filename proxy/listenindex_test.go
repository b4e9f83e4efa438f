package proxy

import (
	"runtime"
	"testing"
)

// TestListChangeCostsWhatItNotifies: a server's list change reaches the
// listen requests that hear of it (those that asked for that list; for an
// isolated server's instance, those of its session alone), and costs what
// it notifies: each change walked, and copied, every listen open, up to
// maxListeners, under the gateway's lock.
func TestListChangeCostsWhatItNotifies(t *testing.T) {
	g := &Gateway{sessions: map[*session]struct{}{}, listeners: map[*listener]struct{}{}}
	owner, other := &session{g: g}, &session{g: g}
	listen := func(s *session, k kind) *listener {
		l := &listener{s: s, holder: "h"}
		l.lists[k] = true
		g.mu.Lock()
		g.addListener(l)
		g.mu.Unlock()
		return l
	}
	for range maxListeners - 3 {
		listen(other, kindPrompts) // none hears of tools
	}
	ownTools, ownPrompts, sharedTools := listen(owner, kindTools), listen(owner, kindPrompts), listen(other, kindTools)
	instance, shared := &upstream{g: g}, &upstream{g: g}
	instance.owner = owner

	instance.notifyListChanged(kindTools)
	if !ownTools.pending[kindTools] || sharedTools.pending[kindTools] || ownPrompts.pending[kindPrompts] {
		t.Fatalf("an isolated instance's tools changed: its session's tools listen told %v, another session's %v, its prompts listen %v; want true, false, false",
			ownTools.pending[kindTools], sharedTools.pending[kindTools], ownPrompts.pending[kindPrompts])
	}
	shared.notifyListChanged(kindTools)
	if !sharedTools.pending[kindTools] || ownPrompts.pending[kindPrompts] {
		t.Fatalf("a shared server's tools changed: the tools listen of another session told %v, a prompts listen %v; want true, false", sharedTools.pending[kindTools], ownPrompts.pending[kindPrompts])
	}

	g.mu.Lock()
	g.removeListener(ownTools)
	g.removeListener(sharedTools)
	g.mu.Unlock()
	const changes = 100
	for _, u := range []*upstream{instance, shared} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range changes {
			u.notifyListChanged(kindTools)
		}
		runtime.ReadMemStats(&after)
		// Generous: the walk of them all copied 1,024 pointers, 8 KiB.
		if per := (after.TotalAlloc - before.TotalAlloc) / changes; per > 512 {
			t.Errorf("a tools change nobody hears of (shared: %v), beside %d listens for prompts: %d bytes allocated, want at most 512", u.owner == nil, maxListeners-3, per)
		}
	}
}
