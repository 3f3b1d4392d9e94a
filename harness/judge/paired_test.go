package judge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/contract"
)

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
