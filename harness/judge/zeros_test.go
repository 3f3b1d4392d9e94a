package judge

import (
	"math/rand/v2"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/contract"
)

// TestZerosAndExactUnits: zero on both sides is no change, for any unit, paired or
// not; a rise from zero is a change (any rise of an exact unit is a regression, a
// timed unit's needs the runs to show it); an exact unit that repeated one value
// per side changes by exactly its ratio, settled by a few runs where the paired
// signed-rank test could not be; an exact unit whose runs varied is judged by
// statistics, not as exact.
func TestZerosAndExactUnits(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rep := func(n int, v float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		unit       string
		base, head []float64
		paired     bool
		want       Status
		fromZero   bool
	}{
		{"zero on both sides, exact unit", contract.UnitPersistBytes, rep(3, 0), rep(3, 0), false, NoRegression, false},
		{"zero on both sides, exact unit, paired", contract.UnitPersistBytes, rep(3, 0), rep(3, 0), true, NoRegression, false},
		{"zero on both sides, timed unit", contract.UnitWriteAmp, rep(6, 0), rep(6, 0), false, NoRegression, false},
		{"zero on both sides, one run each", contract.UnitStateBytes, rep(1, 0), rep(1, 0), false, NoRegression, false},
		{"rise from zero, exact unit", contract.UnitPersistBytes, rep(3, 0), rep(3, 500), false, Regression, true},
		{"rise from zero, exact unit, paired", contract.UnitStateBytes, rep(3, 0), rep(3, 800), true, Regression, true},
		{"rise from zero, timed unit, 10 runs", contract.UnitWriteAmp, rep(10, 0), sample(rng, 10, 1.1, 0.01), false, Regression, true},
		{"rise from zero, timed unit, 2 runs", contract.UnitWriteAmp, rep(2, 0), sample(rng, 2, 1.1, 0.01), false, Inconclusive, true},
		{"rise from zero, higher is better", contract.UnitSteadyRows, rep(10, 0), sample(rng, 10, 1e5, 0.01), false, Improvement, true},
		{"exact rise of 2 %, paired", contract.UnitStateBytes, rep(3, 1000), rep(3, 1020), true, Regression, false},
		{"exact rise of 2 %, unpaired", contract.UnitStatePerMV, rep(3, 0.05), rep(3, 0.051), false, Regression, false},
		{"exact rise of 0.5 %", contract.UnitStateRows, rep(3, 200), rep(3, 201), true, NoRegression, false},
		{"exact, unchanged", contract.UnitStateRows, rep(3, 256), rep(3, 256), true, NoRegression, false},
		{"exact fall", contract.UnitPersistBytes, rep(3, 1000), rep(3, 900), false, Improvement, false},
		{"exact fall to zero", contract.UnitPersistBytes, rep(3, 1000), rep(3, 0), false, Improvement, false},
		{"exact, from zero to below it: no ratio, no rise", contract.UnitPersistBytes, rep(3, 0), rep(3, -5), false, Inconclusive, false},
		{"exact unit that varied, same distribution", contract.UnitStateBytes, sample(rng, 8, 1000, 0.001), sample(rng, 8, 1000, 0.001), false, NoRegression, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			side := func(vals []float64) Side {
				var s Side
				for i, v := range vals {
					s.Results = append(s.Results, &benchfmt.Result{Name: benchfmt.Name("Backfill/persist=on"), Iters: 1,
						Values: []benchfmt.Value{{Value: v, Unit: tc.unit}}})
					if tc.paired {
						s.Rounds = append(s.Rounds, i)
					}
				}
				return s
			}
			th := DefaultThresholds()
			if err := th.Set("steady-rows/s=3%"); err != nil {
				t.Fatal(err)
			}
			v, _, err := Compare(side(tc.base), side(tc.head), contract.UnitMap(), Options{Thresholds: th, Correction: Holm, Alpha: 0.05})
			if err != nil {
				t.Fatal(err)
			}
			if len(v.Findings) != 1 {
				t.Fatalf("findings %+v, want one", v.Findings)
			}
			f := v.Findings[0]
			if f.Status != tc.want || f.FromZero != tc.fromZero {
				t.Errorf("%s: status %s (from zero %v; delta %+.3f, p %.3g, adjusted %.3g), want %s (from zero %v)", tc.unit, f.Status, f.FromZero, f.Delta, f.P, f.PAdjusted, tc.want, tc.fromZero)
			}
			if v.Inconclusive > 0 != (tc.want == Inconclusive) || v.Regression != (tc.want == Regression) {
				t.Errorf("verdict: %d inconclusive, regression %v; want %s", v.Inconclusive, v.Regression, tc.want)
			}
		})
	}
}

// TestExactUnitThatVariedIsNotExact: runs of an exact unit that differ are
// compared by the U test, whose p is above zero, not by exactness (p = 0).
func TestExactUnitThatVariedIsNotExact(t *testing.T) {
	g := synthetic(t, map[string][2][]float64{"cell=a|" + contract.UnitStateBytes: {{1000, 1001, 1002}, {1000, 1001, 1003}}})
	v, err := Judge(g, Options{Thresholds: DefaultThresholds(), Correction: Holm, Alpha: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if f := v.Findings[0]; f.P == 0 || f.Status == Regression {
		t.Errorf("varied runs of an exact unit: p %v, status %s; want the U test's p > 0 and no regression", f.P, f.Status)
	}
}
