package judge

import (
	"slices"

	"github.com/backfill-bench/backfill-bench/harness/stats"
)

// welch compares two cells' runs unpaired with Welch's t-test on the logs of their
// values (stats.WelchLog). It is for instruction counts: a pairing by round gains
// nothing there, and the rank tests' smallest p-values, 2/2ⁿ paired and 2/C(2n, n)
// unpaired, keep a compare of the few rounds a counted compare affords from ever
// reaching α. ok is false when the rank tests must judge instead.
func welch(base, head *GridCell) (c Change, ok bool) {
	r, ok := stats.WelchLog(base.Raw, head.Raw, Confidence)
	if !ok {
		return Change{}, false
	}
	c = Change{Delta: r.Delta, P: r.P, se: r.SE}
	c.Lo, c.Hi = &r.Lo, &r.Hi
	return c, true
}

// welchUnit says whether o judges unit with Welch's test (Options.Welch).
func (o Options) welchUnit(unit string) bool { return slices.Contains(o.Welch, unit) }
