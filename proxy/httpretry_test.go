package proxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// scripted answers attempts from a list: a status (with a Retry-After) or a
// connection error, the last one repeating; it records when each came.
type scripted struct {
	steps []step
	times []time.Time
}

type step struct {
	status     int // 0: a connection error
	retryAfter string
	reached    bool // for a connection error: the connection was made
}

func (s *scripted) attempt(context.Context) (*http.Response, bool, error) {
	s.times = append(s.times, time.Now())
	st := s.steps[min(len(s.times), len(s.steps))-1]
	if st.status == 0 {
		return nil, st.reached, errors.New("connection refused")
	}
	h := http.Header{}
	if st.retryAfter != "" {
		h.Set("Retry-After", st.retryAfter)
	}
	return &http.Response{StatusCode: st.status, Header: h, Body: io.NopCloser(strings.NewReader("busy"))}, true, nil
}

// gaps are the waits between attempts.
func (s *scripted) gaps() []time.Duration {
	var out []time.Duration
	for i := 1; i < len(s.times); i++ {
		out = append(out, s.times[i].Sub(s.times[i-1]))
	}
	return out
}

func TestRetryHonoursRetryAfterSeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &scripted{steps: []step{{status: 503, retryAfter: "2"}, {status: 200}}}
		resp, err, note := httpRetry.retry(context.Background(), true, time.Time{}, s.attempt)
		if err != nil || resp.StatusCode != 200 || note != "" {
			t.Fatalf("got %v, %v, %q; want 200", resp, err, note)
		}
		if g := s.gaps(); len(g) != 1 || g[0] != 2*time.Second {
			t.Errorf("waits %v, want [2s]", g)
		}
	})
}

func TestRetryHonoursRetryAfterDate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		at := time.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat)
		s := &scripted{steps: []step{{status: 429, retryAfter: at}, {status: 200}}}
		resp, _, _ := httpRetry.retry(context.Background(), true, time.Time{}, s.attempt)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		if g := s.gaps(); len(g) != 1 || g[0] != 3*time.Second {
			t.Errorf("waits %v, want [3s]", g)
		}
	})
}

func TestRetryBacksOffWithJitterWithinCeilings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for range 50 { // the jitter is random: many runs, each within bounds
			s := &scripted{steps: []step{{status: 502}, {status: 504}, {status: 0}, {status: 200}}}
			resp, err, _ := httpRetry.retry(context.Background(), true, time.Time{}, s.attempt)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("got %v, %v", resp, err)
			}
			g := s.gaps()
			if len(g) != 3 {
				t.Fatalf("%d attempts, want 4", len(s.times))
			}
			for i, ceiling := range []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second} {
				if g[i] < 0 || g[i] > ceiling {
					t.Errorf("wait %d = %v, want within [0, %v]", i+1, g[i], ceiling)
				}
			}
		}
	})
}

func TestRetryStopsAfterTheAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &scripted{steps: []step{{status: 503, retryAfter: "1"}}}
		resp, _, note := httpRetry.retry(context.Background(), true, time.Time{}, s.attempt)
		if resp.StatusCode != 503 || len(s.times) != 4 || note != " (after 4 attempts)" {
			t.Errorf("status %d after %d attempts, note %q; want 503 after 4", resp.StatusCode, len(s.times), note)
		}
	})
}

func TestRetryNeverWaitsPastTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &scripted{steps: []step{{status: 503, retryAfter: "120"}, {status: 200}}}
		start := time.Now()
		resp, _, note := httpRetry.retry(context.Background(), true, start.Add(60*time.Second), s.attempt)
		if resp.StatusCode != 503 || len(s.times) != 1 || time.Since(start) != 0 {
			t.Errorf("status %d after %d attempts and %v; want 503 at once", resp.StatusCode, len(s.times), time.Since(start))
		}
		if !strings.Contains(note, "retried after 2m0s, past the request's deadline") {
			t.Errorf("note %q does not say why", note)
		}
	})
}

func TestRetryOfAnActingRequestOnlyBeforeItCouldReachTheServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &scripted{steps: []step{{status: 503, retryAfter: "1"}, {status: 200}}}
		resp, _, note := httpRetry.retry(context.Background(), false, time.Time{}, s.attempt)
		if resp.StatusCode != 503 || len(s.times) != 1 || !strings.Contains(note, "not sent again") {
			t.Errorf("a tools/call answered 503: status %d after %d attempts, note %q; want 503 once, said", resp.StatusCode, len(s.times), note)
		}
		s = &scripted{steps: []step{{status: 0, reached: true}, {status: 200}}}
		if _, err, _ := httpRetry.retry(context.Background(), false, time.Time{}, s.attempt); err == nil || len(s.times) != 1 {
			t.Errorf("a tools/call whose connection failed once made: err %v after %d attempts; want the error, once", err, len(s.times))
		}
		s = &scripted{steps: []step{{status: 0}, {status: 200}}}
		if resp, err, _ := httpRetry.retry(context.Background(), false, time.Time{}, s.attempt); err != nil || resp.StatusCode != 200 || len(s.times) != 2 {
			t.Errorf("a tools/call whose connection was refused: %v after %d attempts; want sent again", err, len(s.times))
		}
	})
}

func TestRetryWaitEndsWithTheCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s := &scripted{steps: []step{{status: 503, retryAfter: "30"}, {status: 200}}}
		start := time.Now()
		_, err, _ := httpRetry.retry(ctx, true, time.Time{}, s.attempt)
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 5*time.Second {
			t.Errorf("err %v after %v; want the caller's deadline, at 5s", err, time.Since(start))
		}
	})
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{" 7 ", 7 * time.Second, true},
		{"Thu, 26 Nov 2026 09:00:30 GMT", 30 * time.Second, true},
		{"Thu, 26 Nov 2026 08:00:00 GMT", 0, true}, // in the past: at once
		{"-1", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{"99999999999", 0, false}, // over 32 bits: not a wait anyone means
	} {
		got, ok := parseRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
