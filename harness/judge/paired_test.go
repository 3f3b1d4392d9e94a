package judge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/contract"
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
	if p := signedRankP(d); math.Abs(p-10.0/256) > 1e-12 {
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
		if p := signedRankP(tc.d); math.Abs(p-tc.p) > 1e-12 {
			t.Errorf("signedRankP(%v) = %v, want %v", tc.d, p, tc.p)
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
		if got, want := signedRankP(d), bruteSignedRankP(d); math.Abs(got-want) > 1e-9 {
			t.Fatalf("trial %d: signedRankP(%v) = %v, enumeration %v", trial, d, got, want)
		}
	}
}

func TestHodgesLehmann(t *testing.T) {
	est, lo, hi, ok := hodgesLehmann([]float64{1, 2, 3, 4, 5, 6}, 0.95)
	// 21 Walsh averages; P(W+ ≤ 0) = 1/64 ≤ 0.025 < P(W+ ≤ 1) = 2/64, so the
	// interval is from the 1st to the 21st: the smallest and largest value.
	if !ok || est != 3.5 || lo != 1 || hi != 6 {
		t.Errorf("1..6: %v [%v, %v] ok=%v, want 3.5 [1, 6]", est, lo, hi, ok)
	}
	if _, _, _, ok := hodgesLehmann([]float64{1, 2, 3, 4, 5}, 0.95); ok {
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
		if _, lo, hi, _ := hodgesLehmann(d, 0.95); lo <= 0.3 && 0.3 <= hi {
			covered++
		}
	}
	if rate := float64(covered) / trials; rate < 0.94 {
		t.Errorf("coverage %.3f, want ≥ 0.95 (less the spread of %d trials)", rate, trials)
	}
}

// pairedSides makes base and head samples of one unit for cells, n rounds each:
// each round's pair shares a round effect (machine drift), the head is shifted
// by shift, and each job has its own noise.
func pairedSides(rng *rand.Rand, cells, n int, unit string, shift, noise float64) (Side, Side) {
	return driftingSides(rng, cells, n, unit, shift, noise, 0.05)
}

// driftingSides is pairedSides with a round effect of the given spread.
func driftingSides(rng *rand.Rand, cells, n int, unit string, shift, noise, drift float64) (Side, Side) {
	var base, head Side
	for c := range cells {
		name := benchfmt.Name(fmt.Sprintf("Backfill/profile=mem/workload=narrow/rows=%d/persist=off/scan=merged/barrier=1s/par=2", c+1))
		for r := 1; r <= n; r++ {
			round := 1 + drift*rng.NormFloat64()
			for i, side := range []*Side{&base, &head} {
				v := 100 * round * (1 + noise*rng.NormFloat64())
				if i == 1 {
					v *= 1 + shift
				}
				side.Results = append(side.Results, &benchfmt.Result{Name: name, Iters: 1, Values: []benchfmt.Value{{Value: v, Unit: unit}}})
				side.Rounds = append(side.Rounds, r)
			}
		}
	}
	return base, head
}

func TestPairedVerdictStates(t *testing.T) {
	for _, tc := range []struct {
		name          string
		unit          string
		n             int
		shift, noise  float64
		want          Status
		wantOutcome   Status
		wantCIInsideθ bool
	}{
		{"a shift smaller than the threshold, measured tightly", "rows/s", 10, -0.01, 0.003, NoRegression, NoRegression, true},
		{"no shift, measured tightly", "sec/op", 10, 0, 0.003, NoRegression, NoRegression, true},
		{"no shift, but too noisy to tell", "rows/s", 6, 0, 0.05, Inconclusive, Inconclusive, false},
		{"a real slowdown", "rows/s", 10, -0.10, 0.003, Regression, Regression, false},
		{"a real speedup", "rows/s", 10, +0.10, 0.003, Improvement, NoRegression, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, 3))
			base, head := pairedSides(rng, 1, tc.n, tc.unit, tc.shift, tc.noise)
			v, _, err := Compare(base, head, contract.UnitMap(), Options{Thresholds: wholeJobThresholds(), Correction: Holm, Alpha: 0.05})
			if err != nil {
				t.Fatal(err)
			}
			f := v.Findings[0]
			if f.Status != tc.want || v.Outcome() != tc.wantOutcome {
				t.Fatalf("status %v, outcome %v; want %v, %v (finding %+v)", f.Status, v.Outcome(), tc.want, tc.wantOutcome, f)
			}
			if f.Pairs != tc.n {
				t.Errorf("pairs %d, want %d", f.Pairs, tc.n)
			}
			lo, hi := f.interval()
			if inside := math.Abs(lo) <= f.Threshold && math.Abs(hi) <= f.Threshold; inside != tc.wantCIInsideθ {
				t.Errorf("interval [%v, %v] inside ±%v: %v, want %v", lo, hi, f.Threshold, inside, tc.wantCIInsideθ)
			}
			if f.Delta < lo || f.Delta > hi {
				t.Errorf("estimate %v outside its interval [%v, %v]", f.Delta, lo, hi)
			}
		})
	}
}

// TestPairingRemovesRoundDrift: drift shared by the two jobs of a round (10 %)
// hides a 4 % slowdown from the unpaired test but not from the paired one.
func TestPairingRemovesRoundDrift(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	base, head := driftingSides(rng, 1, 12, "rows/s", -0.04, 0.003, 0.10)
	paired, _, err := Compare(base, head, contract.UnitMap(), Options{Thresholds: wholeJobThresholds(), Correction: Holm, Alpha: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	base.Rounds, head.Rounds = nil, nil
	unpaired, _, err := Compare(base, head, contract.UnitMap(), Options{Thresholds: wholeJobThresholds(), Correction: Holm, Alpha: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if paired.Findings[0].Status != Regression || unpaired.Findings[0].Status == Regression {
		t.Errorf("paired %v (p %.4f), unpaired %v (p %.4f); want only the paired test to see it",
			paired.Findings[0].Status, paired.Findings[0].P, unpaired.Findings[0].Status, unpaired.Findings[0].P)
	}
	if d := paired.Detectable["rows/s"]; !(d > 0 && d < 0.04) {
		t.Errorf("paired detectable change %v, want below the 4 %% it found", d)
	}
	if d := unpaired.Detectable["rows/s"]; !(d > paired.Detectable["rows/s"]) {
		t.Errorf("unpaired detectable change %v, want above the paired one", d)
	}
}

// TestPairedFalseAlarms: A/A compares of 16 cells × 2 metrics, paired, with
// realistic noise, raise a false regression in at most alpha of them.
func TestPairedFalseAlarms(t *testing.T) {
	const seeds = 200
	alarms := 0
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 17))
		var base, head Side
		for _, unit := range []string{"rows/s", "sec/op"} {
			b, h := pairedSides(rng, 16, 10, unit, 0, 0.03)
			base.Results, base.Rounds = append(base.Results, b.Results...), append(base.Rounds, b.Rounds...)
			head.Results, head.Rounds = append(head.Results, h.Results...), append(head.Rounds, h.Rounds...)
		}
		v, _, err := Compare(base, head, contract.UnitMap(), Options{Thresholds: wholeJobThresholds(), Correction: Holm, Alpha: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		if v.Regression {
			alarms++
		}
	}
	t.Logf("paired A/A compares with a false regression: %d of %d", alarms, seeds)
	if alarms > seeds*9/100 {
		t.Errorf("false-alarm rate %d/%d, want ≤ 5 %% (+ spread)", alarms, seeds)
	}
}

func TestDetectableFormula(t *testing.T) {
	// (1.96 + 1.2816)·0.01 ≈ 3.24 % at α = 0.05, 90 % power.
	if d := detectable(0.01, 0.05); math.Abs(d-math.Expm1(0.032415)) > 1e-4 {
		t.Errorf("detectable(1%%) = %v", d)
	}
	if !math.IsInf(detectable(math.NaN(), 0.05), 1) {
		t.Error("an unknown spread should detect nothing")
	}
	if got := slices.Sorted(func(yield func(float64) bool) { yield(zQuantile(0.975)) }); math.Abs(got[0]-1.959964) > 1e-5 {
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
		k := mannWhitneyCritical(m, n, 0.025)
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
		if _, lo, hi, ok := twoSampleHL(x, y, 0.95); ok && lo <= 0.5 && 0.5 <= hi {
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

// TestPairCorrelation: the correlation of the runs of a round, paired by round
// whatever order the values were read in, against values worked out by hand.
func TestPairCorrelation(t *testing.T) {
	e := math.E
	cell := func(rounds []int, logs ...float64) *GridCell {
		c := &GridCell{Rounds: rounds}
		for _, l := range logs {
			c.Raw = append(c.Raw, math.Pow(e, l))
		}
		return c
	}
	r := []int{0, 1, 2, 3}
	for _, tc := range []struct {
		name       string
		base, head *GridCell
		want       float64
	}{
		{"same drift, head 10 % slower", cell(r, 0, 1, 2, 3), cell(r, 0.1, 1.1, 2.1, 3.1), 1},
		{"opposite", cell(r, 0, 1, 2, 3), cell(r, 3, 2, 1, 0), -1},
		// logs b = 1,2,3,4 and h = 1,3,2,4: Σ(b−b̄)(h−h̄) = 4, Σ(b−b̄)² = Σ(h−h̄)² = 5.
		{"by hand", cell(r, 1, 2, 3, 4), cell(r, 1, 3, 2, 4), 0.8},
		{"paired by round, not by position", cell(r, 1, 2, 3, 4), cell([]int{3, 2, 1, 0}, 4, 2, 3, 1), 0.8},
		{"two pairs", cell([]int{0, 1}, 1, 2), cell([]int{0, 1}, 1, 2), math.NaN()},
		{"a side that does not move", cell(r, 1, 1, 1, 1), cell(r, 1, 2, 3, 4), math.NaN()},
		{"no rounds", cell(nil, 1, 2, 3), cell(nil, 1, 2, 3), math.NaN()},
	} {
		got := PairCorrelation(tc.base, tc.head)
		if math.IsNaN(tc.want) != math.IsNaN(got) || !math.IsNaN(got) && math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
