package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// bruteSignedRankP enumerates every sign flip: the definition of the exact test.
func bruteSignedRankP(d []float64) float64 {
	var nz []float64
	for _, x := range d {
		if x != 0 {
			nz = append(nz, x)
		}
	}
	n := len(nz)
	abs := make([]float64, n)
	for i, x := range nz {
		abs[i] = math.Abs(x)
	}
	rank := func(i int) float64 { // average rank of abs[i]
		below, same := 0, 0
		for _, y := range abs {
			if y < abs[i] {
				below++
			} else if y == abs[i] {
				same++
			}
		}
		return float64(below) + float64(same+1)/2
	}
	ranks := make([]float64, n)
	total, w := 0.0, 0.0
	for i := range nz {
		ranks[i] = rank(i)
		total += ranks[i]
		if nz[i] > 0 {
			w += ranks[i]
		}
	}
	far := math.Abs(w - total/2)
	hits := 0
	for mask := 0; mask < 1<<n; mask++ {
		s := 0.0
		for i := range n {
			if mask&(1<<i) != 0 {
				s += ranks[i]
			}
		}
		if math.Abs(s-total/2) >= far-1e-9 {
			hits++
		}
	}
	return float64(hits) / float64(int(1)<<n)
}

func TestSignedRankKnownCases(t *testing.T) {
	// Hollander & Wolfe's depression scores (before − after): V = 40, two-sided
	// p = 0.03906 (10/256), as R's wilcox.test(x, y, paired = TRUE) gives.
	x := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	y := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	d := make([]float64, len(x))
	for i := range x {
		d[i] = x[i] - y[i]
	}
	if p := SignedRankP(d); math.Abs(p-10.0/256) > 1e-12 {
		t.Errorf("depression data: p = %v, want 0.0390625", p)
	}
	for _, tc := range []struct {
		d []float64
		p float64
	}{
		{[]float64{1, 2, 3, 4, 5, 6}, 2.0 / 64},  // all positive: the two extreme flips
		{[]float64{-1, 2, 3, 4, 5, 6}, 4.0 / 64}, // W+ = 20 of 21
		{[]float64{0, 0, 0}, 1},                  // nothing but zeros
		{[]float64{1, -1, 2, -2}, 1},             // symmetric
		// With a zero, as R's wilcox.test(c(0, 1:6)): the zero is dropped and the
		// p-value is the normal approximation, V = 21, z = (21−10.5−0.5)/√22.75.
		{[]float64{0, 1, 2, 3, 4, 5, 6}, math.Erfc(10 / math.Sqrt(22.75) / math.Sqrt2)},
		// R: wilcox.test(c(0, 0, 1, -2, 3, 3)): V = 8 (ranks 1, 3.5, 3.5), mean 5,
		// the tie of two 3s: σ² = 7.5 − (2³−2)/48.
		{[]float64{0, 0, 1, -2, 3, 3}, math.Erfc(2.5 / math.Sqrt(7.5-6.0/48) / math.Sqrt2)},
	} {
		if p := SignedRankP(tc.d); math.Abs(p-tc.p) > 1e-12 {
			t.Errorf("SignedRankP(%v) = %v, want %v", tc.d, p, tc.p)
		}
	}
}

// TestSignedRankMatchesEnumeration checks the exact distribution, ties included,
// against every sign flip on random small samples without zeros (with zeros the
// p-value is R's normal approximation, checked in TestSignedRankKnownCases).
func TestSignedRankMatchesEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for trial := range 300 {
		n := 1 + rng.IntN(12)
		d := make([]float64, n)
		for i := range d {
			d[i] = float64(rng.IntN(9) - 3) // small integers: many ties
			if d[i] == 0 {
				d[i] = 5
			}
		}
		if got, want := SignedRankP(d), bruteSignedRankP(d); math.Abs(got-want) > 1e-9 {
			t.Fatalf("trial %d: SignedRankP(%v) = %v, enumeration %v", trial, d, got, want)
		}
	}
}

func TestHodgesLehmann(t *testing.T) {
	est, lo, hi, ok := HodgesLehmann([]float64{1, 2, 3, 4, 5, 6}, 0.95)
	// 21 Walsh averages; P(W+ ≤ 0) = 1/64 ≤ 0.025 < P(W+ ≤ 1) = 2/64, so the
	// interval is from the 1st to the 21st: the smallest and largest value.
	if !ok || est != 3.5 || lo != 1 || hi != 6 {
		t.Errorf("1..6: %v [%v, %v] ok=%v, want 3.5 [1, 6]", est, lo, hi, ok)
	}
	if _, _, _, ok := HodgesLehmann([]float64{1, 2, 3, 4, 5}, 0.95); ok {
		t.Error("5 values give a 95 % interval; P(W+ = 0) = 1/32 > 0.025")
	}
	// Coverage: the interval holds the true center at least 95 % of the time.
	rng := rand.New(rand.NewPCG(9, 9))
	const trials = 2000
	covered := 0
	for range trials {
		d := make([]float64, 10)
		for i := range d {
			d[i] = 0.3 + rng.NormFloat64()
		}
		if _, lo, hi, _ := HodgesLehmann(d, 0.95); lo <= 0.3 && 0.3 <= hi {
			covered++
		}
	}
	if rate := float64(covered) / trials; rate < 0.94 {
		t.Errorf("coverage %.3f, want ≥ 0.95 (less the spread of %d trials)", rate, trials)
	}
}

func TestDetectableFormula(t *testing.T) {
	// (1.96 + 1.2816)·0.01 ≈ 3.24 % at α = 0.05, 90 % power.
	if d := Detectable(0.01, 0.05); math.Abs(d-math.Expm1(0.032415)) > 1e-4 {
		t.Errorf("Detectable(1%%) = %v", d)
	}
	if !math.IsInf(Detectable(math.NaN(), 0.05), 1) {
		t.Error("an unknown spread should detect nothing")
	}
	if got := slices.Sorted(func(yield func(float64) bool) { yield(ZQuantile(0.975)) }); math.Abs(got[0]-1.959964) > 1e-5 {
		t.Errorf("z(0.975) = %v", got[0])
	}
}

// bruteMannWhitneyCDF counts, over every split of m+n ranks, how often U ≤ u.
func bruteMannWhitneyCDF(m, n, u int) float64 {
	hits, total := 0, 0
	for mask := 0; mask < 1<<(m+n); mask++ {
		if bitsSet(mask) != m {
			continue
		}
		total++
		// U: pairs (x, y) with x > y; x holds the ranks in mask.
		U, ys := 0, 0
		for r := 0; r < m+n; r++ {
			if mask&(1<<r) != 0 {
				U += ys
			} else {
				ys++
			}
		}
		if U <= u {
			hits++
		}
	}
	return float64(hits) / float64(total)
}

func bitsSet(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

func TestMannWhitneyCriticalMatchesEnumeration(t *testing.T) {
	for _, mn := range [][2]int{{6, 6}, {5, 7}, {8, 4}, {3, 3}, {1, 9}} {
		m, n := mn[0], mn[1]
		k := MannWhitneyCritical(m, n, 0.025)
		if k > 0 && bruteMannWhitneyCDF(m, n, k-1) > 0.025+1e-12 {
			t.Errorf("m=%d n=%d: k=%d but P(U ≤ %d) = %v > 0.025", m, n, k, k-1, bruteMannWhitneyCDF(m, n, k-1))
		}
		if bruteMannWhitneyCDF(m, n, k) <= 0.025 {
			t.Errorf("m=%d n=%d: k=%d is not the largest: P(U ≤ %d) = %v", m, n, k, k, bruteMannWhitneyCDF(m, n, k))
		}
	}
}

func TestTwoSampleHLCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 8))
	const trials = 1000
	covered := 0
	for range trials {
		x, y := make([]float64, 8), make([]float64, 8)
		for i := range x {
			x[i], y[i] = rng.NormFloat64(), 0.5+rng.NormFloat64()
		}
		if _, lo, hi, ok := TwoSampleHL(x, y, 0.95); ok && lo <= 0.5 && 0.5 <= hi {
			covered++
		}
	}
	if rate := float64(covered) / trials; rate < 0.935 {
		t.Errorf("coverage %.3f, want ≥ 0.95 (less the spread of %d trials)", rate, trials)
	}
}

func TestRoundsToDetect(t *testing.T) {
	// ((1.96 + 1.2816)·0.05 / ln 1.03)² = 30.1 → 31 rounds for a 3 % change.
	if n := RoundsToDetect(0.05, 0.03, 0.05); n != 31 {
		t.Errorf("RoundsToDetect(5%%, 3%%) = %d, want 31", n)
	}
	// No spread: the signed-rank floor 2/2ⁿ ≤ 0.01 needs 8 rounds.
	if n := RoundsToDetect(0, 0.03, 0.01); n != 8 {
		t.Errorf("RoundsToDetect(0, 3%%, α=0.01) = %d, want 8", n)
	}
	if RoundsToDetect(math.NaN(), 0.03, 0.05) != 0 {
		t.Error("an unknown spread needs no rounds?")
	}
}
