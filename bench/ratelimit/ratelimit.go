// Package ratelimit is the backfill's snapshot rate limit (a GCRA bucket per actor).
package ratelimit

import (
	"math"
	"time"
)

// Paused is the rate limit that reads no snapshot rows (the engine's limit of 0).
const Paused = -1.0

// pausedWait is how long a paused scan waits before looking again; an upstream
// message (a barrier that changes the limit) ends the wait sooner.
const pausedWait = time.Hour

// Limiter is an actor's snapshot rate limit, modelled on the engine's backfill
// rate limiter (RisingWave src/common/rate_limit/src/lib.rs, LeakBucket): a
// GCRA bucket that charges one permit per snapshot row (arrangement_backfill.rs
// waits for 1 per row) and lives as long as the executor, so rows read before a
// barrier still count after the scan is reopened at the next epoch. tat is when
// the rows charged so far are paid for; taking a row moves it on by 1/rate from
// max(tat, now), so idle time is not saved up, and a row may go while the debt
// tat − now stays within the burst. The engine's bucket has no burst; this one
// lets one chunk go at once (the engine's snapshot chunks are at most the limit's
// size too, utils.rs create_builder), so that a timer waking late does not lower
// the rate.
type Limiter struct {
	rate  float64       // rows/s; 0: none; Paused: no rows
	every time.Duration // 1/rate
	burst time.Duration // burst rows × every
	rows  int           // the burst in rows
	tat   time.Time
}

// NewLimiter returns a limiter at rate (rows/s; 0: none; Paused) that lets burst
// rows go at once.
func NewLimiter(rate float64, burst int) *Limiter {
	l := &Limiter{rows: max(burst, 1)}
	l.Set(rate, time.Time{})
	return l
}

// Set changes the rate at now. As the engine's update (RateLimiter::update
// builds a new bucket when the limit changes, on a Throttle mutation), the
// bucket starts afresh: the debt at the old rate is dropped.
func (l *Limiter) Set(rate float64, now time.Time) {
	l.rate, l.tat = rate, now
	l.every, l.burst = 0, 0
	if rate > 0 {
		l.every = time.Duration(math.Round(float64(time.Second) / rate))
		l.burst = time.Duration(l.rows) * l.every
	}
}

// Rate is the current rate (0: none; Paused).
func (l *Limiter) Rate() float64 { return l.rate }

// Limited reports whether rows are charged at all.
func (l *Limiter) Limited() bool { return l.rate != 0 }

// Paused reports whether the limit reads no rows.
func (l *Limiter) Paused() bool { return l.rate < 0 }

// Wait is how long the scan must wait at now before its next row.
func (l *Limiter) Wait(now time.Time) time.Duration {
	switch {
	case l.rate == 0:
		return 0
	case l.rate < 0:
		return pausedWait
	}
	// A bucket never charged has a zero tat: the debt saturates, and minus the burst
	// would wrap to centuries. No debt is no wait (the burst is at least one row).
	debt := l.tat.Sub(now)
	if debt <= 0 {
		return 0
	}
	return max(debt-l.burst+l.every, 0)
}

// WaitNow is Wait at the present time. Without a limit it reads no clock: the scan
// asks before every row.
func (l *Limiter) WaitNow() time.Duration {
	if !l.Limited() {
		return 0
	}
	return l.Wait(time.Now())
}

// Take charges one row read at now.
func (l *Limiter) Take(now time.Time) {
	if l.rate <= 0 {
		return
	}
	if l.tat.Before(now) { // idle time is not saved up
		l.tat = now
	}
	l.tat = l.tat.Add(l.every)
}

// Debt is how far ahead of now the bucket has charged rows: the wait before the
// row after the burst.
func (l *Limiter) Debt(now time.Time) time.Duration { return l.tat.Sub(now) }
