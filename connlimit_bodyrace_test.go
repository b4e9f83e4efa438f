package main

import (
	"testing"
	"time"
)

// A connection that has just begun reading a body is not taken for one
// that stalled: its last progress, from a body read long before, is not
// read together with its new reading flag. (Read in the other order, the
// progress before the flag, a body that began between the two loads looked
// an hour quiet, and its connection was closed at the limit.) Many
// connections begin their bodies while stalledBody looks, over and over.
func TestConnLimitBodyJustBegunIsNotStalled(t *testing.T) {
	l := &connLimit{}
	for range 256 {
		c := &limitedConn{l: l, allAt: len(l.all)}
		l.all = append(l.all, c)
	}
	longAgo := time.Now().Add(-time.Hour).UnixNano()
	for round := range 2000 {
		for _, c := range l.all {
			c.reading.Store(false)
			c.progress.Store(longAgo) // a body read an hour ago
		}
		begun := make(chan struct{})
		go func() {
			defer close(begun)
			for _, c := range l.all {
				c.ReadingBody(true)
			}
		}()
		for looking := true; looking; {
			select {
			case <-begun:
				looking = false
			default:
			}
			l.mu.Lock()
			victim, _ := l.stalledBody()
			l.mu.Unlock()
			if victim != nil {
				t.Fatalf("round %d: connection %d, whose body just began, taken for one that stalled", round, victim.allAt)
			}
		}
	}
}
