package pipeline

import "github.com/backfill-bench/backfill-bench/bench/ratestep"

// RateStep changes every actor's snapshot rate limit mid-job (see ratestep.Step).
type RateStep = ratestep.Step

// checkRateLimits refuses limits with which a job never ends (see ratestep.Check).
func (c *Config) checkRateLimits() error {
	return ratestep.Check(c.SnapshotRateLimit, c.SnapshotRateStep, c.BarrierRows)
}
