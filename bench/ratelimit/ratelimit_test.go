package ratelimit

import (
	"testing"
	"time"
)

// TestLimiter: rows go at the rate after a burst of one chunk, idle time is not
// saved up, a change of rate starts a fresh bucket, 0 is no limit and Paused
// reads nothing.
func TestLimiter(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := time.Millisecond
	for _, tc := range []struct {
		name  string
		rate  float64
		burst int
		takes []time.Duration // offsets from t0 of the rows taken
		at    time.Duration   // then Wait at t0+at
		want  time.Duration
	}{
		{"unlimited", 0, 4, []time.Duration{0, 0, 0, 0, 0, 0}, 0, 0},
		{"paused", Paused, 4, nil, 0, pausedWait},
		{"within the burst", 1000, 4, []time.Duration{0, 0, 0}, 0, 0},
		{"burst spent", 1000, 4, []time.Duration{0, 0, 0, 0}, 0, ms},
		{"burst spent, later", 1000, 4, []time.Duration{0, 0, 0, 0}, ms / 2, ms / 2},
		{"paid off", 1000, 4, []time.Duration{0, 0, 0, 0}, ms, 0},
		{"idle is not saved", 1000, 1, []time.Duration{0, 10 * ms, 10 * ms}, 10 * ms, 2 * ms},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := NewLimiter(tc.rate, tc.burst)
			for _, d := range tc.takes {
				l.Take(t0.Add(d))
			}
			if got := l.Wait(t0.Add(tc.at)); got != tc.want {
				t.Errorf("Wait = %v, want %v", got, tc.want)
			}
		})
	}
	l := NewLimiter(1000, 1)
	for range 100 {
		l.Take(t0)
	}
	if got := l.Wait(t0); got != 100*ms {
		t.Fatalf("after 100 rows at once at 1000 rows/s: Wait %v, want 100ms", got)
	}
	l.Set(50_000, t0) // as the engine's update: a fresh bucket at the new rate
	if got := l.Wait(t0); got != 0 {
		t.Errorf("after Set: Wait %v, want 0 (the old debt dropped)", got)
	}
	l.Set(Paused, t0)
	if !l.Paused() || l.Wait(t0.Add(time.Hour)) != pausedWait {
		t.Errorf("Set(Paused): paused %v, Wait %v", l.Paused(), l.Wait(t0.Add(time.Hour)))
	}
}

// TestLimiterFreshBucketDoesNotWait: a limiter that has charged nothing lets the
// first row go at once (its zero tat once made the wait wrap around to centuries,
// which only the merged scan's one-row-per-epoch rule hid).
func TestLimiterFreshBucketDoesNotWait(t *testing.T) {
	l := NewLimiter(15_000, 64)
	if w := l.Wait(time.Now()); w != 0 {
		t.Errorf("a fresh bucket waits %v", w)
	}
}

// TestWaitNow: WaitNow is Wait at the present time: none without a limit, the
// paused wait when paused, and a charged bucket's debt with a limit.
func TestWaitNow(t *testing.T) {
	if w := NewLimiter(0, 64).WaitNow(); w != 0 {
		t.Errorf("no limit: waits %v", w)
	}
	if w := NewLimiter(Paused, 64).WaitNow(); w != pausedWait {
		t.Errorf("paused: waits %v, want %v", w, pausedWait)
	}
	l := NewLimiter(1, 1) // one row a second, a burst of one
	for range 3 {
		l.Take(time.Now())
	}
	if w := l.WaitNow(); w <= 2*time.Second || w > 3*time.Second {
		t.Errorf("three rows taken at one a second, a burst of one: waits %v, want just under 3 s", w)
	}
}
