package pipeline

import (
	"fmt"
	"sync/atomic"
	"time"
)

// RateStep changes every actor's snapshot rate limit mid-job, as an ALTER of the
// backfill rate limit does in the engine: the change rides on a barrier, and each
// actor applies it at the first barrier it handles after the point. The zero value
// changes nothing.
type RateStep struct {
	AtRows int64         // the point: once the actors together emitted this many snapshot rows
	After  time.Duration // or this long after the job started (when AtRows is 0)
	Rate   float64       // the new limit, rows/s per actor; 0: none; backfill.Paused
}

// Set reports whether the step changes anything.
func (s RateStep) Set() bool { return s.AtRows > 0 || s.After > 0 }

// rateStepper tells the actors, at their barriers, whether the step is due.
type rateStepper struct {
	step    RateStep
	emitted atomic.Int64
	due     atomic.Bool
	timer   *time.Timer
}

// start begins counting the step's point; stop ends its timer.
func (s *rateStepper) start() {
	if s.step.AtRows == 0 {
		s.timer = time.AfterFunc(s.step.After, func() { s.due.Store(true) })
	}
}

func (s *rateStepper) stop() {
	if s.timer != nil {
		s.timer.Stop()
	}
}

// onEmit counts the snapshot rows emitted.
func (s *rateStepper) onEmit(n int) {
	if s.step.AtRows > 0 && s.emitted.Add(int64(n)) >= s.step.AtRows {
		s.due.Store(true)
	}
}

// change is backfill.Env.RateChange.
func (s *rateStepper) change() (float64, bool) { return s.step.Rate, s.due.Load() }

// checkRateLimits refuses limits with which a job never ends: a scan paused for
// good, or paused with barriers cut by rows read (the barrier that would resume
// it waits for rows the paused scan does not read).
func (c *Config) checkRateLimits() error {
	paused := c.SnapshotRateLimit < 0
	switch {
	case paused && !c.SnapshotRateStep.Set():
		return fmt.Errorf("snapshot rate limit: paused (0) for the whole job, which then never ends: step it to a rate, like 0/s..100k/s@1s")
	case paused && c.SnapshotRateStep.AtRows > 0:
		return fmt.Errorf("snapshot rate limit: paused until %d rows are read, which a paused scan never reads: step it after a time, like @1s", c.SnapshotRateStep.AtRows)
	case c.SnapshotRateStep.Set() && c.SnapshotRateStep.Rate < 0:
		return fmt.Errorf("snapshot rate limit: a step to 0 pauses the scan for good and the job never ends")
	case paused && c.BarrierRows > 0:
		return fmt.Errorf("snapshot rate limit: paused with barriers every %d rows read: a paused scan reads none, so no barrier comes; use a time barrier", c.BarrierRows)
	}
	return nil
}
