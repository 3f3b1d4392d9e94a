package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// LogRatio is an unpaired change between two samples measured on the logs of their
// values: Delta is the ratio of their geometric means minus 1, [Lo, Hi] its
// interval, SE the standard error of the difference of the logs' means.
type LogRatio struct {
	Delta, Lo, Hi, P, SE float64
}

// WelchLog compares two samples with Welch's t-test on the logs of their values,
// for counts whose noise is small and has no round-to-round common part. ok is
// false when a sample has fewer than two values or a value ≤ 0.
func WelchLog(base, head []float64, confidence float64) (r LogRatio, ok bool) {
	lb, lh := Logs(base), Logs(head)
	m, n := float64(len(lb)), float64(len(lh))
	if lb == nil || lh == nil || m < 2 || n < 2 {
		return LogRatio{}, false
	}
	sb, sh := StdDev(lb), StdDev(lh)
	vb, vh := sb*sb/m, sh*sh/n
	diff := Mean(lh) - Mean(lb)
	r.Delta = math.Expm1(diff)
	r.SE = math.Sqrt(vb + vh)
	if r.SE == 0 { // every value of each sample alike: the difference is exact
		r.P = 1
		if diff != 0 {
			r.P = 0
		}
		r.Lo, r.Hi = r.Delta, r.Delta
		return r, true
	}
	// Welch–Satterthwaite degrees of freedom.
	df := (vb + vh) * (vb + vh) / (vb*vb/(m-1) + vh*vh/(n-1))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	r.P = 2 * t.Survival(math.Abs(diff)/r.SE)
	q := t.Quantile(1-(1-confidence)/2) * r.SE
	r.Lo, r.Hi = math.Expm1(diff-q), math.Expm1(diff+q)
	return r, true
}
