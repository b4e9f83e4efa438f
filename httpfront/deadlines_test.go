package httpfront

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// deadlineRecorder is a response that records the write deadlines set on it.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	set []time.Time
}

func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error {
	d.set = append(d.set, t)
	return nil
}

// A whole answer keeps the write deadline set as its request came while
// that is still at least 15/16 of the timeout away: an inline call's answer
// comes microseconds later, and setting almost the same deadline again
// resets a timer for nothing. One that comes later, or without a deadline
// known, gets the whole timeout from its write.
func TestAnswerKeepsTheRequestsFreshWriteDeadline(t *testing.T) {
	const timeout = time.Minute
	now := time.Now()
	for _, tc := range []struct {
		name     string
		written  time.Time
		setAgain bool // a new deadline is set
	}{
		{"just set", now.Add(timeout), false},
		{"none known", time.Time{}, true},
		{"set long ago", now.Add(timeout - timeout/8), true},
	} {
		w := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
		cw := newClientWriter(w, timeout)
		cw.written = tc.written
		if err := cw.json(http.StatusOK, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		if got := len(w.set) > 0; got != tc.setAgain {
			t.Errorf("%s: a new deadline set %v, want %v", tc.name, got, tc.setAgain)
		}
		if len(w.set) > 0 && w.set[0].Sub(now) < timeout {
			t.Errorf("%s: the new deadline is %v from the request, want at least the timeout %v", tc.name, w.set[0].Sub(now), timeout)
		}
	}
}
