package pipeline

import (
	"strings"
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/backfill"
)

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
