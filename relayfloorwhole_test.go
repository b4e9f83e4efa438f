package main

import (
	"fmt"
	"strings"
	"testing"
)

// writeSizes records the size of each write.
type writeSizes []int

func (w *writeSizes) Write(p []byte) (int, error) {
	*w = append(*w, len(p))
	return len(p), nil
}

// relayfloor -whole writes a line longer than its buffer in one write, once
// whole (the floor of a gateway that checks a message before passing it
// on), where the plain relay passes it on in pieces as they come; short
// lines go as they did.
func TestRelayFloorWholeHoldsALongLine(t *testing.T) {
	long := strings.Repeat("x", 200<<10) + "\n"
	lines := "{}\n" + long + long + "{}\n"
	var held, plain writeSizes
	if err := copyLines(&held, strings.NewReader(lines), true); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(held), fmt.Sprint([]int{3, len(long), len(long), 3}); got != want {
		t.Errorf("-whole: writes of %s bytes; want %s", got, want)
	}
	if err := copyLines(&plain, strings.NewReader(lines), false); err != nil {
		t.Fatal(err)
	}
	if len(plain) <= 4 {
		t.Errorf("plain: writes of %v bytes; want a long line in pieces", plain)
	}
}
