package proxy

import (
	"context"
	"testing"
)

type countEnder struct{ n int }

func (e *countEnder) Ended() { e.n++ }

// A stateless request's context ends once, as a connection's request's
// does: what was registered is told then, on that goroutine; what is
// registered later is refused (OnEndTell) or run at once (AfterFunc).
func TestStatelessCtxEndsOnce(t *testing.T) {
	var c statelessCtx
	done := c.Done()
	var e countEnder
	if !c.onEnd(&e) {
		t.Fatal("onEnd refused before the end")
	}
	ran, stopped := 0, 0
	c.AfterFunc(func() { ran++ })
	stop := c.AfterFunc(func() { stopped++ })
	if !stop() {
		t.Fatal("stop before the end reports false")
	}
	c.end(true)
	c.end(false) // the answer after the client left: changes nothing
	select {
	case <-done:
	default:
		t.Fatal("Done not closed by the end")
	}
	if c.Err() != context.Canceled || !c.clientLeft() || e.n != 1 || ran != 1 || stopped != 0 {
		t.Fatalf("err %v, client left %v, ender told %d, after funcs run %d (stopped one %d)", c.Err(), c.clientLeft(), e.n, ran, stopped)
	}
	if c.onEnd(&e) {
		t.Error("onEnd took an Ender after the end")
	}
	late := make(chan struct{})
	c.AfterFunc(func() { close(late) })
	<-late
	var answered statelessCtx
	answered.end(false)
	if answered.clientLeft() || answered.Done() == nil {
		t.Error("a context ended by the answer says the client left, or has no Done")
	}
}
