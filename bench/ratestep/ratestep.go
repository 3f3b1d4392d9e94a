// Package ratestep changes the snapshot rate limit of a job's actors mid-job.
package ratestep

import (
	"fmt"
	"sync/atomic"
	"time"
)

// Step changes every actor's snapshot rate limit mid-job, as an ALTER of the
// backfill rate limit does in the engine: the change rides on a barrier, and each
// actor applies it at the first barrier it handles after the point. The zero value
// changes nothing.
type Step struct {
	AtRows int64         // the point: once the actors together emitted this many snapshot rows
	After  time.Duration // or this long after the job started (when AtRows is 0)
	Rate   float64       // the new limit, rows/s per actor; 0: none; backfill.Paused
}

// Set reports whether the step changes anything.
func (s Step) Set() bool { return s.AtRows > 0 || s.After > 0 }

// Stepper tells the actors, at their barriers, whether the step is due.
type Stepper struct {
	step    Step
	emitted atomic.Int64
	due     atomic.Bool
	timer   *time.Timer
}

// New returns a stepper of step; Start begins counting its point.
func New(step Step) *Stepper { return &Stepper{step: step} }

// Start begins counting the step's point.
func (s *Stepper) Start() {
	if s.step.AtRows == 0 {
		s.timer = time.AfterFunc(s.step.After, func() { s.due.Store(true) })
	}
}

// Stop ends the step's timer.
func (s *Stepper) Stop() {
	if s.timer != nil {
		s.timer.Stop()
	}
}

// OnEmit counts the snapshot rows emitted.
func (s *Stepper) OnEmit(n int) {
	if s.step.AtRows > 0 && s.emitted.Add(int64(n)) >= s.step.AtRows {
		s.due.Store(true)
	}
}

// Change is backfill.Env.RateChange.
func (s *Stepper) Change() (float64, bool) { return s.step.Rate, s.due.Load() }

// Check refuses limits with which a job never ends: a scan paused (limit < 0) for
// good, or paused with barriers cut by rows read (barrierRows > 0: the barrier
// that would resume it waits for rows the paused scan does not read).
func Check(limit float64, step Step, barrierRows int64) error {
	paused := limit < 0
	switch {
	case paused && !step.Set():
		return fmt.Errorf("snapshot rate limit: paused (0) for the whole job, which then never ends: step it to a rate, like 0/s..100k/s@1s")
	case paused && step.AtRows > 0:
		return fmt.Errorf("snapshot rate limit: paused until %d rows are read, which a paused scan never reads: step it after a time, like @1s", step.AtRows)
	case step.Set() && step.Rate < 0:
		return fmt.Errorf("snapshot rate limit: a step to 0 pauses the scan for good and the job never ends")
	case paused && barrierRows > 0:
		return fmt.Errorf("snapshot rate limit: paused with barriers every %d rows read: a paused scan reads none, so no barrier comes; use a time barrier", barrierRows)
	}
	return nil
}
