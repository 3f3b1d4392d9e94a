// Package stats holds the distribution-free statistics of a paired compare: the
// Wilcoxon signed-rank test, Hodges–Lehmann estimates and intervals, Mann–Whitney
// critical values, spreads and the rounds a change needs to be detected.
package stats

import (
	"math"
	"slices"
)

// Runs of base and head are paired by round (run as a pair, at once or back to
// back), and the statistic is the per-round log ratio head/base, tested with the
// Wilcoxon signed-rank test and estimated by the Hodges–Lehmann estimator with its
// distribution-free confidence interval.

// nonzero are the differences that are neither zero nor NaN.
func nonzero(d []float64) []float64 {
	var nz []float64
	for _, x := range d {
		if x != 0 && !math.IsNaN(x) {
			nz = append(nz, x)
		}
	}
	return nz
}

// SignedRankP is the two-sided p-value of the Wilcoxon signed-rank test that the
// differences d are symmetric around zero. As R's wilcox.test: zero differences
// are dropped, and with any dropped the p-value is the normal approximation (with
// continuity and tie corrections), else exact: the distribution of the rank sum
// over every sign flip, with average ranks for ties.
func SignedRankP(d []float64) float64 {
	nz := nonzero(d)
	n := len(nz)
	if n == 0 {
		return 1
	}
	// Doubled average ranks of |d| are integers.
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmpFloat(math.Abs(nz[a]), math.Abs(nz[b])) })
	rank2 := make([]int, n)
	for i := 0; i < n; {
		j := i
		for j+1 < n && math.Abs(nz[idx[j+1]]) == math.Abs(nz[idx[i]]) {
			j++
		}
		for k := i; k <= j; k++ {
			rank2[idx[k]] = i + 1 + j + 1 // (i+1 + j+1)/2 doubled
		}
		i = j + 1
	}
	total, w := 0, 0
	for i, r := range rank2 {
		total += r
		if nz[i] > 0 {
			w += r
		}
	}
	if n < len(d) {
		return signedRankNormalP(rank2, w)
	}
	dist := signFlipDist(rank2, total)
	// Two-sided: every outcome at least as far from the center total/2.
	far := math.Abs(float64(w) - float64(total)/2)
	p := 0.0
	for s, pr := range dist {
		if math.Abs(float64(s)-float64(total)/2) >= far-1e-9 {
			p += pr
		}
	}
	return min(p, 1)
}

// signedRankNormalP is R's normal approximation of the signed-rank test's
// two-sided p-value, from doubled ranks and the doubled statistic w2.
func signedRankNormalP(rank2 []int, w2 int) float64 {
	n := float64(len(rank2))
	ties := map[int]float64{}
	for _, r := range rank2 {
		ties[r]++
	}
	tieSum := 0.0
	for _, t := range ties {
		tieSum += t*t*t - t
	}
	sigma := math.Sqrt(n*(n+1)*(2*n+1)/24 - tieSum/48)
	if sigma == 0 {
		return 1
	}
	z := float64(w2)/2 - n*(n+1)/4
	z = (z - math.Copysign(0.5, z)) / sigma
	if z == 0 {
		return 1
	}
	return min(1, math.Erfc(math.Abs(z)/math.Sqrt2))
}

// signFlipDist is the distribution of the sum of the ranks given a + sign, each
// sign a fair coin: dist[s] = P(sum = s).
func signFlipDist(ranks []int, total int) []float64 {
	dist := make([]float64, total+1)
	dist[0] = 1
	hi := 0
	for _, r := range ranks {
		for s := hi; s >= 0; s-- {
			if dist[s] == 0 {
				continue
			}
			dist[s+r] += dist[s] / 2
			dist[s] /= 2
		}
		hi += r
	}
	return dist
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// HodgesLehmann returns the Hodges–Lehmann estimate of the center of d (the
// median of its Walsh averages) and its distribution-free confidence interval at
// the given level: the c-th smallest and largest Walsh averages, c from the
// signed-rank distribution. ok is false when there are too few values for an
// interval at that level (fewer than 6 at 95 %); lo and hi are then ±Inf.
// Consistent with SignedRankP, as R's wilcox.test: zero differences are dropped,
// and with any dropped c is from the normal approximation; when every difference
// is zero, the estimate and interval are 0.
func HodgesLehmann(d []float64, confidence float64) (est, lo, hi float64, ok bool) {
	nz := nonzero(d)
	if len(d) > 0 && len(nz) == 0 {
		return 0, 0, 0, true
	}
	zeros := len(nz) < len(d)
	d = nz
	n := len(d)
	if n == 0 {
		return 0, math.Inf(-1), math.Inf(1), false
	}
	walsh := make([]float64, 0, n*(n+1)/2)
	for i := range d {
		for j := i; j < n; j++ {
			walsh = append(walsh, (d[i]+d[j])/2)
		}
	}
	slices.Sort(walsh)
	m := len(walsh)
	est = MedianSorted(walsh)
	c := signedRankCritical(n, (1-confidence)/2)
	if zeros {
		mu, sd := float64(n*(n+1))/4, math.Sqrt(float64(n*(n+1)*(2*n+1))/24)
		c = int(math.Floor(mu + ZQuantile((1-confidence)/2)*sd))
	}
	if c < 1 {
		return est, math.Inf(-1), math.Inf(1), false
	}
	return est, walsh[c-1], walsh[m-c], true
}

// MedianSorted is the median of sorted values, the Mean of the middle two for an
// even count: the Hodges–Lehmann estimators' rule.
func MedianSorted(v []float64) float64 {
	m := len(v)
	if m%2 == 1 {
		return v[m/2]
	}
	return (v[m/2-1] + v[m/2]) / 2
}

// signedRankCritical is the largest c with P(W+ ≤ c−1) ≤ tail for the signed-rank
// statistic of n untied values; 0 when even P(W+ = 0) exceeds tail.
func signedRankCritical(n int, tail float64) int {
	ranks := make([]int, n)
	for i := range ranks {
		ranks[i] = i + 1
	}
	return lowerCritical(signFlipDist(ranks, n*(n+1)/2), tail)
}

// lowerCritical is the largest c with P(X ≤ c−1) ≤ tail for the distribution
// dist[x] = P(X = x).
func lowerCritical(dist []float64, tail float64) int {
	cum, c := 0.0, 0
	for x, p := range dist {
		cum += p
		if cum > tail+1e-12 {
			break
		}
		c = x + 1
	}
	return c
}

// ZQuantile is the standard normal quantile.
func ZQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// StdDev is the sample standard deviation.
func StdDev(v []float64) float64 {
	if len(v) < 2 {
		return math.NaN()
	}
	m := Mean(v)
	ss := 0.0
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(v)-1))
}

func Mean(v []float64) float64 {
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	return sum / float64(len(v))
}

// Power is the chance at which a Finding's MDE is detected.
const Power = 0.9

// Detectable is the smallest relative change a test at level alpha detects with
// probability Power, for a log-scale standard error se: (z₁₋α/₂ + z_power)·se.
func Detectable(se, alpha float64) float64 {
	if math.IsNaN(se) || math.IsInf(se, 0) {
		return math.Inf(1)
	}
	return math.Expm1((ZQuantile(1-alpha/2) + ZQuantile(Power)) * se)
}

// TwoSampleHL returns the two-sample Hodges–Lehmann estimate of the shift y − x
// (the median of every difference y_j − x_i) and its distribution-free confidence
// interval from the Mann–Whitney U distribution: the companion of the U test.
func TwoSampleHL(x, y []float64, confidence float64) (est, lo, hi float64, ok bool) {
	m, n := len(x), len(y)
	if m == 0 || n == 0 {
		return 0, math.Inf(-1), math.Inf(1), false
	}
	diffs := make([]float64, 0, m*n)
	for _, a := range x {
		for _, b := range y {
			diffs = append(diffs, b-a)
		}
	}
	slices.Sort(diffs)
	N := len(diffs)
	est = MedianSorted(diffs)
	k := MannWhitneyCritical(m, n, (1-confidence)/2)
	if k < 1 {
		return est, math.Inf(-1), math.Inf(1), false
	}
	return est, diffs[k-1], diffs[N-k], true
}

// MannWhitneyCritical is the largest k with P(U ≤ k−1) ≤ tail for samples of m and
// n untied values: exact up to m·n = 2500, the normal approximation beyond.
func MannWhitneyCritical(m, n int, tail float64) int {
	if m*n > 2500 {
		mu, sd := float64(m*n)/2, math.Sqrt(float64(m*n*(m+n+1))/12)
		return max(0, int(math.Floor(mu+ZQuantile(tail)*sd+0.5)))
	}
	// dist[i][j][u]: P(U = u) for samples of i and j, by the recursion on which
	// sample holds the largest value.
	prev := make([][]float64, n+1) // row i−1
	cur := make([][]float64, n+1)
	for j := 0; j <= n; j++ {
		prev[j] = []float64{1} // i = 0: U = 0
	}
	for i := 1; i <= m; i++ {
		cur[0] = []float64{1}
		for j := 1; j <= n; j++ {
			d := make([]float64, i*j+1)
			pi, pj := float64(i)/float64(i+j), float64(j)/float64(i+j)
			// The largest value is x's (prob i/(i+j)): it beats all j of y, U += j.
			for u, p := range prev[j] {
				d[u+j] += pi * p
			}
			for u, p := range cur[j-1] {
				d[u] += pj * p
			}
			cur[j] = d
		}
		prev, cur = cur, make([][]float64, n+1)
	}
	return lowerCritical(prev[n], tail)
}

// CV is the coefficient of variation: standard deviation ÷ Mean.
func CV(v []float64) float64 {
	return StdDev(v) / Mean(v)
}

// RoundsToDetect is how many paired rounds a test at level alpha needs to find a
// change of size threshold with probability Power, given the per-round log-ratio
// spread sd: ((z₁₋α/₂ + z_power)·sd / ln(1+threshold))², and at least enough for the
// signed-rank test to reach alpha at all. 0 when sd is unknown.
func RoundsToDetect(sd, threshold, alpha float64) int {
	if math.IsNaN(sd) || threshold <= 0 {
		return 0
	}
	n := (ZQuantile(1-alpha/2) + ZQuantile(Power)) * sd / math.Log1p(threshold)
	return max(int(math.Ceil(n*n)), MinPairedRounds(alpha))
}

// MinPairedRounds is the fewest paired rounds with which the signed-rank test can
// reach level at all: its smallest p-value is 2/2ⁿ.
func MinPairedRounds(level float64) int {
	n := 1
	for math.Ldexp(1, 1-n) > level {
		n++
	}
	return n
}
