package pipeline

import (
	"strings"
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/backfill"
)

// TestRateStepDue: a step at a row count is due once the actors together have
// emitted that many rows, not before; one in time, once the time has passed.
func TestRateStepDue(t *testing.T) {
	s := &rateStepper{step: RateStep{AtRows: 100, Rate: 5000}}
	s.start()
	defer s.stop()
	for _, n := range []int{40, 40, 19} {
		s.onEmit(n)
		if _, due := s.change(); due {
			t.Fatalf("due after %d of 100 rows", s.emitted.Load())
		}
	}
	s.onEmit(1)
	if rate, due := s.change(); !due || rate != 5000 {
		t.Fatalf("at 100 rows: rate %v, due %v; want 5000, due", rate, due)
	}
	timed := &rateStepper{step: RateStep{After: 20 * time.Millisecond, Rate: backfill.Paused}}
	timed.onEmit(1 << 30) // rows do not matter to a step in time
	if _, due := timed.change(); due {
		t.Fatal("a step in time was due before it started")
	}
	timed.start()
	defer timed.stop()
	deadline := time.Now().Add(10 * time.Second)
	for _, due := timed.change(); !due; _, due = timed.change() {
		if time.Now().After(deadline) {
			t.Fatal("a step after 20ms not due after 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestRateLimitsThatNeverEnd: the job refuses the limits it could never finish
// with, saying why.
func TestRateLimitsThatNeverEnd(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"paused throughout", func(c *Config) { c.SnapshotRateLimit = backfill.Paused }, "never ends"},
		{"paused until rows", func(c *Config) {
			c.SnapshotRateLimit, c.SnapshotRateStep = backfill.Paused, RateStep{AtRows: 10, Rate: 100}
		}, "never reads"},
		{"stepped to paused", func(c *Config) { c.SnapshotRateStep = RateStep{AtRows: 10, Rate: backfill.Paused} }, "for good"},
		{"paused with work barriers", func(c *Config) {
			c.SnapshotRateLimit, c.SnapshotRateStep, c.BarrierRows = backfill.Paused, RateStep{After: time.Second, Rate: 100}, 500
		}, "time barrier"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Default()
			tc.edit(&cfg)
			if err := cfg.fill(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("fill() = %v, want an error saying %q", err, tc.want)
			}
		})
	}
	cfg := Default()
	cfg.SnapshotRateLimit, cfg.SnapshotRateStep = backfill.Paused, RateStep{After: time.Second, Rate: 100}
	if err := cfg.fill(); err != nil {
		t.Errorf("a pause ended in time, time barriers: %v", err)
	}
}
