package judge

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/backfill-bench/backfill-bench/harness/stats"
)

// welch compares two cells' runs unpaired with Welch's t-test on the logs of their
// values: the change is the ratio of their geometric means, its interval Welch's.
// It is for counts whose noise is small and has no round-to-round common part
// (instruction counts: a pairing by round gains nothing there, and the rank tests'
// smallest p-values, 2/2ⁿ paired and 2/C(2n, n) unpaired, keep a compare of the
// few rounds a counted compare affords from ever reaching α). ok is false when a
// side has fewer than two runs or a value ≤ 0: the rank tests judge those.
func welch(base, head *GridCell) (c Change, ok bool) {
	lb, lh := stats.Logs(base.Raw), stats.Logs(head.Raw)
	m, n := float64(len(lb)), float64(len(lh))
	if lb == nil || lh == nil || m < 2 || n < 2 {
		return Change{}, false
	}
	vb, vh := variance(lb)/m, variance(lh)/n
	diff := stats.Mean(lh) - stats.Mean(lb)
	c.Delta = math.Expm1(diff)
	c.se = math.Sqrt(vb + vh)
	if c.se == 0 { // every run of each side alike: the difference is exact
		c.P = 1
		if diff != 0 {
			c.P = 0
		}
		c.Lo, c.Hi = &c.Delta, &c.Delta
		return c, true
	}
	// Welch–Satterthwaite degrees of freedom.
	df := (vb + vh) * (vb + vh) / (vb*vb/(m-1) + vh*vh/(n-1))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	c.P = 2 * t.Survival(math.Abs(diff)/c.se)
	q := t.Quantile(1-(1-Confidence)/2) * c.se
	lo, hi := math.Expm1(diff-q), math.Expm1(diff+q)
	c.Lo, c.Hi = &lo, &hi
	return c, true
}

func variance(v []float64) float64 {
	s := stats.StdDev(v)
	return s * s
}

// welchUnit says whether o judges unit with Welch's test (Options.Welch).
func (o Options) welchUnit(unit string) bool { return slices.Contains(o.Welch, unit) }
