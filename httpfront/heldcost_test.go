package httpfront

import (
	"strconv"
	"testing"
)

// One request of any size max_message_bytes allows can be held while it
// runs, when nothing else is: it counts twice its body (heldCost), so a
// budget sized for one body (max_message_bytes above 128 MiB) refused such
// a request with 503 and "try again shortly" every time, for good.
func TestBudgetHoldsOneRequestOfAnyAllowedSize(t *testing.T) {
	for _, size := range []int{16 << 20, 200 << 20, 1 << 30} {
		f, _ := newServedFront(t, `, "max_message_bytes": `+strconv.Itoa(size), nil)
		if need := heldCost(size); f.bodies.max < need {
			t.Errorf("max_message_bytes %d MiB: the body budget is %d MiB, and a request of that size held takes %d MiB: never served", size>>20, f.bodies.max>>20, need>>20)
		}
	}
}
