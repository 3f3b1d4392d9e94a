package history

import (
	"math"
	"math/rand/v2"
	"sort"
)

// ChangePointConfig tunes E-divisive means.
type ChangePointConfig struct {
	Alpha        float64 // significance of each change point (default 0.01)
	Permutations int     // of the permutation test (default 499)
	MinSegment   int     // fewest points on each side of a change (default 3)
	Seed         uint64  // of the permutations: the same series gives the same answer
}

func (c *ChangePointConfig) fill() {
	if c.Alpha == 0 {
		c.Alpha = 0.01
	}
	if c.Permutations == 0 {
		c.Permutations = 499
	}
	if c.MinSegment == 0 {
		c.MinSegment = 3
	}
	c.MinSegment = max(c.MinSegment, 2) // a side of one point has no spread to compare

}

// ChangePoint is an index where a series' distribution changes: points [Index, …)
// differ from the points before.
type ChangePoint struct {
	Index int
	P     float64 // permutation-test p-value
}

// ChangePoints finds change points in a series with E-divisive means (Matteson and
// James 2014, as MongoDB and Apache Otava use it): bisect at the split that
// maximizes the energy distance between the two sides, keep it if a permutation test
// says so, and repeat on the segments. Sorted by index.
func ChangePoints(series []float64, cfg ChangePointConfig) []ChangePoint {
	cfg.fill()
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	var found []ChangePoint
	var bisect func(lo, hi int)
	bisect = func(lo, hi int) {
		seg := series[lo:hi]
		tau, q := bestSplit(seg, cfg.MinSegment)
		if tau < 0 {
			return
		}
		// How often does a shuffled segment split as well as the real one?
		perm := append([]float64(nil), seg...)
		beaten := 0
		for range cfg.Permutations {
			rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
			if _, qp := bestSplit(perm, cfg.MinSegment); qp >= q {
				beaten++
			}
		}
		p := float64(beaten+1) / float64(cfg.Permutations+1)
		if p > cfg.Alpha {
			return
		}
		found = append(found, ChangePoint{Index: lo + tau, P: p})
		bisect(lo, lo+tau)
		bisect(lo+tau, hi)
	}
	bisect(0, len(series))
	sort.Slice(found, func(i, j int) bool { return found[i].Index < found[j].Index })
	return found
}

// bestSplit returns the split τ of z (left z[:τ], right z[τ:], each at least min
// points) maximizing the scaled energy statistic
//
//	Q(τ) = τ(n−τ)/n · (2·mean|x−y| − mean|x−x'| − mean|y−y'|)
//
// and its value; τ = −1 when z is too short. O(n²) with prefix sums.
func bestSplit(z []float64, min int) (int, float64) {
	n := len(z)
	if n < 2*min {
		return -1, 0
	}
	// P[i][j] = Σ_{a<i, b<j} |z_a − z_b|: any block of pair sums in O(1).
	P := make([][]float64, n+1)
	for i := range P {
		P[i] = make([]float64, n+1)
	}
	for i := 1; i <= n; i++ {
		for j := 1; j <= n; j++ {
			P[i][j] = math.Abs(z[i-1]-z[j-1]) + P[i-1][j] + P[i][j-1] - P[i-1][j-1]
		}
	}
	block := func(a0, a1, b0, b1 int) float64 { return P[a1][b1] - P[a0][b1] - P[a1][b0] + P[a0][b0] }
	best, bestQ := -1, math.Inf(-1)
	for tau := min; tau <= n-min; tau++ {
		m := n - tau
		between := block(0, tau, tau, n) / float64(tau*m)
		// Each unordered pair appears twice in a square block.
		left := block(0, tau, 0, tau) / float64(tau*(tau-1))
		right := block(tau, n, tau, n) / float64(m*(m-1))
		q := float64(tau*m) / float64(n) * (2*between - left - right)
		if q > bestQ {
			best, bestQ = tau, q
		}
	}
	return best, bestQ
}
