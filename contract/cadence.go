package contract

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

// RateLimit is the snapshot scan's limit in rows per second per actor; 0: none.
type RateLimit int64

// String is the limit as names carry it: "200k-per-s" or "none".
func (l RateLimit) String() string {
	if l == 0 {
		return "none"
	}
	return formatCount(int64(l)) + "-per-s"
}

// ParseRateLimit reads "200k-per-s" or "200k/s", or "none".
func ParseRateLimit(s string) (RateLimit, error) {
	if s == "none" {
		return 0, nil
	}
	if n, per, ok := cutPer(s); ok && per == "s" {
		if v, err := parseCount(n); err == nil && v > 0 {
			return RateLimit(v), nil
		}
	}
	return 0, fmt.Errorf("limit %q: want snapshot rows per second per actor, like 200k/s, or none", s)
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
