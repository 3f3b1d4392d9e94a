// Package rates holds the cadence and rate values of cell dimensions: when barriers come,
// how fast the upstream table changes and how fast the snapshot scan may read.
package rates

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Cadence is when barriers come: every Interval of wall-clock time (what a real
// system does), or after every Rows snapshot rows read by all actors together (so
// that every run of a cell does identical work: the same epochs, batches and bytes).
// Exactly one of the two is set.
type Cadence struct {
	Interval time.Duration
	Rows     int64
}

// MinBarrierInterval is the shortest time-driven barrier interval a job accepts.
const MinBarrierInterval = time.Millisecond

// Every returns the time-driven cadence of interval d.
func Every(d time.Duration) Cadence { return Cadence{Interval: d} }

// WorkDriven reports whether barriers are cut by rows read.
func (c Cadence) WorkDriven() bool { return c.Rows > 0 }

// String is the cadence as cell names carry it: "100ms", "1s", or "50krows".
func (c Cadence) String() string {
	if c.Rows > 0 {
		return formatCount(c.Rows) + "rows"
	}
	return FormatDuration(c.Interval)
}

// ParseCadence reads "100ms" or "50krows" (also "50000rows", "1mrows").
func ParseCadence(s string) (Cadence, error) {
	if n, ok := strings.CutSuffix(s, "rows"); ok {
		rows, err := parseCount(n)
		if err != nil || rows < 1 {
			return Cadence{}, fmt.Errorf("barrier %q: want a row count ≥ 1 before \"rows\", like 50krows", s)
		}
		return Cadence{Rows: rows}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return Cadence{}, fmt.Errorf("barrier %q: want a duration > 0 like 100ms, or snapshot rows like 50krows", s)
	}
	if d < MinBarrierInterval {
		return Cadence{}, fmt.Errorf("barrier %q: below %v every barrier's commit outlasts the interval and the job never ends; did you mean %dms?", s, MinBarrierInterval, d.Nanoseconds())
	}
	return Cadence{Interval: d}, nil
}

// ChangeRate is how many upstream changes the source generates: N per second of a
// time-driven epoch (Per "s"), or N per epoch (Per "epoch"). The zero value is the
// default: 10 000/s for a time-driven cadence, 1 % of the rows of a work-driven
// one per epoch.
type ChangeRate struct {
	N   int64
	Per string // "s", "epoch", or "" for the default
}

// DefaultChangesPerSecond is the change rate of a time-driven cadence by default.
const DefaultChangesPerSecond = 10_000

// Default reports whether the rate is the default (left out of cell names).
func (r ChangeRate) Default() bool { return r.Per == "" }

// String is the rate as names carry it: "10k-per-s", "500-per-epoch" or
// "default" (names split at '/', so a rate has none).
func (r ChangeRate) String() string {
	if r.Per == "" {
		return "default"
	}
	return formatCount(r.N) + "-per-" + r.Per
}

// ParseChangeRate reads "10k-per-s" or "10k/s", "500-per-epoch" or "500/epoch",
// "0/s" (a snapshot-only job), or "default".
func ParseChangeRate(s string) (ChangeRate, error) {
	if s == "default" {
		return ChangeRate{}, nil
	}
	n, per, ok := cutPer(s)
	v, err := parseCount(n)
	if !ok || err != nil || v < 0 || per != "s" && per != "epoch" {
		return ChangeRate{}, fmt.Errorf("changes %q: want changes per second or per epoch, like 10k/s or 500/epoch (0/s: a snapshot-only job), or default", s)
	}
	return ChangeRate{N: v, Per: per}, nil
}

// cutPer splits "N/unit" or "N-per-unit".
func cutPer(s string) (n, per string, ok bool) {
	if n, per, ok = strings.Cut(s, "-per-"); ok {
		return n, per, ok
	}
	return strings.Cut(s, "/")
}

// ChangesPerEpoch is how many changes one epoch of cadence c carries at rate r.
// A rate per second has no meaning for a work-driven cadence: Matrix.Validate
// refuses that pair.
func (r ChangeRate) ChangesPerEpoch(c Cadence) int64 {
	switch {
	case r.Per == "epoch":
		return r.N
	case r.Per == "s":
		return int64(float64(r.N) * c.Interval.Seconds())
	case c.WorkDriven():
		return c.Rows / 100
	}
	return int64(DefaultChangesPerSecond * c.Interval.Seconds())
}

// RateLimit is the snapshot scan's limit in rows per second per actor from the
// start of the job (0: none; Pause: no rows), and optionally a step to another
// limit mid-job, as the engine's ALTER of a backfill's rate limit (its Throttle
// mutation, applied at a barrier). The zero value is none.
type RateLimit struct {
	Rate int64
	Step RateStep // zero: none
}

// RateStep is a change of the rate limit at a point of the job: when the actors
// have emitted Percent per cent of the table's rows, or After the job began
// (one of the two), each actor taking it at its next barrier.
type RateStep struct {
	Rate    int64 // the limit after the step: rows/s per actor; 0: none
	Percent int   // 1 to 99
	After   time.Duration
}

// Pause is the rate of a limit of 0, which reads no snapshot rows (as in the engine).
const Pause = -1

// String is the limit as names carry it: "none", "200k-per-s", "0-per-s" (paused)
// or with a step "200k-per-s..50k-per-s@50%", "0-per-s..100k-per-s@2s".
func (l RateLimit) String() string {
	if l.Step == (RateStep{}) {
		return formatRate(l.Rate)
	}
	at := strconv.Itoa(l.Step.Percent) + "%"
	if l.Step.Percent == 0 {
		at = FormatDuration(l.Step.After)
	}
	return formatRate(l.Rate) + ".." + formatRate(l.Step.Rate) + "@" + at
}

func formatRate(r int64) string {
	switch r {
	case 0:
		return "none"
	case Pause:
		return "0-per-s"
	}
	return formatCount(r) + "-per-s"
}

// ParseRateLimit reads "200k-per-s" or "200k/s", or "none", or a step from one
// limit to another: "200k/s..50k/s@50%" (at half the snapshot rows) or
// "0/s..100k/s@2s" (paused for the first two seconds); 0/s pauses the scan, as in
// the engine, so only a step in time may end a pause, and none may begin one.
func ParseRateLimit(s string) (RateLimit, error) {
	bad := func(why string) (RateLimit, error) {
		return RateLimit{}, fmt.Errorf("limit %q: %s", s, why)
	}
	const want = "want snapshot rows per second per actor, like 200k/s, or none, or a step mid-job like 200k/s..50k/s@50% or 0/s..100k/s@2s"
	rates, at, stepped := strings.Cut(s, "@")
	from, to, two := strings.Cut(rates, "..")
	if stepped != two {
		return bad(want)
	}
	var l RateLimit
	var err error
	if l.Rate, err = parseRate(from); err != nil {
		return bad(want)
	}
	if !stepped {
		if l.Rate == Pause {
			return bad("0/s pauses the scan for the whole job, which never ends; step it to a rate after a time, like 0/s..100k/s@1s")
		}
		return l, nil
	}
	if l.Step.Rate, err = parseRate(to); err != nil {
		return bad(want)
	}
	if pct, ok := strings.CutSuffix(at, "%"); ok {
		if l.Step.Percent, err = strconv.Atoi(pct); err != nil || l.Step.Percent < 1 || l.Step.Percent > 99 {
			return bad("the step's point: want a per cent of the snapshot rows from 1% to 99%, or a time like 2s")
		}
	} else if l.Step.After, err = time.ParseDuration(at); err != nil || l.Step.After <= 0 {
		return bad("the step's point: want a per cent of the snapshot rows from 1% to 99%, or a time like 2s")
	}
	switch {
	case l.Step.Rate == l.Rate:
		return bad("the step changes nothing: give two different limits")
	case l.Step.Rate == Pause:
		return bad("a step to 0/s pauses the scan for good, and the job never ends")
	case l.Rate == Pause && l.Step.Percent > 0:
		return bad("a paused scan reads no rows, so it never reaches a per cent of them: step it after a time, like @1s")
	}
	return l, nil
}

// parseRate reads one limit: "none", "0/s" (Pause) or "200k/s".
func parseRate(s string) (int64, error) {
	if s == "none" {
		return 0, nil
	}
	if n, per, ok := cutPer(s); ok && per == "s" {
		if v, err := parseCount(n); err == nil && v >= 0 {
			if v == 0 {
				return Pause, nil
			}
			return v, nil
		}
	}
	return 0, fmt.Errorf("rate %q", s)
}

// Paused reports whether the scan starts paused.
func (l RateLimit) Paused() bool { return l.Rate == Pause }

// Slowest is the lowest rate the scan is limited to at any point (0: never
// limited), for estimating a job's time.
func (l RateLimit) Slowest() int64 {
	slowest := int64(0)
	for _, r := range []int64{l.Rate, l.Step.Rate} {
		if r > 0 && (slowest == 0 || r < slowest) {
			slowest = r
		}
	}
	return slowest
}

// formatCount renders 50000 as 50k and 2000000 as 2m where exact.
func formatCount(n int64) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return strconv.FormatInt(n/1_000_000, 10) + "m"
	case n >= 1000 && n%1000 == 0:
		return strconv.FormatInt(n/1000, 10) + "k"
	}
	return strconv.FormatInt(n, 10)
}

// parseCount reads "50000", "50k", "2m" or "1_000".
func parseCount(s string) (int64, error) {
	s = strings.ReplaceAll(s, "_", "")
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "k"):
		mult, s = 1000, strings.TrimSuffix(s, "k")
	case strings.HasSuffix(s, "m"):
		mult, s = 1_000_000, strings.TrimSuffix(s, "m")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, err
	}
	return n * mult, nil
}

// FormatDuration renders a duration without trailing zero units: 100ms, 1s, 1m30s.
func FormatDuration(d time.Duration) string {
	s := d.String()
	for _, z := range []string{"m0s", "h0m"} {
		if strings.HasSuffix(s, z) {
			s = strings.TrimSuffix(s, z[1:])
		}
	}
	return s
}
