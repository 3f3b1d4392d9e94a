package harness

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/judge"
)

// simulated makes the results of rounds first … first+count−1 of cells on both
// sides: per job noise (lognormal, sd noise), a drift shared by the two jobs of a
// round, and the head's steady throughput scaled by 1+shift (its CPU per row by
// 1/(1+shift)).
func simulated(rng *rand.Rand, cells []contract.Cell, first, count int, shift, noise float64, prior sides) sides {
	out := sides{base: prior.base, head: prior.head, units: contract.UnitMap()}
	for r := first; r < first+count; r++ {
		for _, c := range cells {
			drift := 1 + 0.02*rng.NormFloat64()
			for i, side := range []*judge.Side{&out.base, &out.head} {
				f := 1.0
				if i == 1 {
					f = 1 + shift
				}
				job := drift * (1 + noise*rng.NormFloat64())
				side.Results = append(side.Results, &benchfmt.Result{
					Name: benchfmt.Name(c.FullName() + "-2"), Iters: 1,
					Values: []benchfmt.Value{
						{Value: 400e3 * f * job, Unit: contract.UnitSteadyRows},
						{Value: 3.6e-6 / f * job, Unit: contract.Tidy(contract.UnitSteadyCPU)},
					},
				})
				side.Rounds = append(side.Rounds, r)
			}
		}
	}
	return out
}

// adaptiveRun is one simulated compare with adaptive rounds: its verdict.
func adaptiveRun(t *testing.T, seed uint64, shift, noise float64) *judge.Verdict {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	cfg := CompareConfig{Options: judge.Options{Thresholds: judge.DefaultThresholds(), Correction: judge.Holm, Alpha: 0.05}, Budget: time.Hour}
	cfg.Count = 10
	cells := QuickMatrix().Cells()
	all := simulated(rng, cells, 1, cfg.Count, shift, noise, sides{})
	extend := func(open []contract.Cell, from, count int) (sides, error) {
		all = simulated(rng, open, from, count, shift, noise, all) // everything so far
		return all, nil
	}
	v, _, _, _, err := settle(context.Background(), cfg, all, cells, time.Millisecond, time.Now().Add(time.Hour), extend)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestAdaptiveFalseAlarms: A/A compares with realistic noise (8 % per job, as
// measured on a 2-core machine) and up to MaxLooks looks raise a false regression
// in at most 5 % of compares; shifts of 3 % and 5 % are found at the rates logged.
func TestAdaptiveFalseAlarms(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates many compares")
	}
	const sims = 300
	for _, tc := range []struct {
		shift, noise float64
	}{{0, 0.08}, {0, 0.03}, {-0.03, 0.03}, {-0.05, 0.03}, {-0.05, 0.08}, {-0.10, 0.08}} {
		regressed, settled := 0, 0
		for seed := range uint64(sims) {
			v := adaptiveRun(t, seed, tc.shift, tc.noise)
			if v.Regression {
				regressed++
			}
			if v.Outcome() == judge.NoRegression {
				settled++
			}
		}
		t.Logf("shift %+.0f%%, job noise %.0f%%: regression in %d of %d compares, \"no regression\" in %d", 100*tc.shift, 100*tc.noise, regressed, sims, settled)
		if tc.shift == 0 && regressed > sims*7/100 {
			t.Errorf("A/A at %.0f%% noise: false regressions in %d of %d compares, want ≤ 5 %% (+ spread)", 100*tc.noise, regressed, sims)
		}
	}
}

func TestLookAlpha(t *testing.T) {
	if lookAlpha(0.05, 1) != 0.05 || lookAlpha(0.05, 3) != 0.0221 || lookAlpha(0.01, 2) != 0.005 {
		t.Errorf("look alphas %v %v %v", lookAlpha(0.05, 1), lookAlpha(0.05, 3), lookAlpha(0.01, 2))
	}
}

// TestAdaptiveStopsAtTheBudget: with no time left, no rounds are added and the
// verdict says why it stayed inconclusive.
func TestAdaptiveStopsAtTheBudget(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	cfg := CompareConfig{Options: judge.Options{Thresholds: judge.DefaultThresholds(), Correction: judge.Holm, Alpha: 0.05}, Budget: time.Minute}
	cfg.Count = 10
	cells := QuickMatrix().Cells()
	all := simulated(rng, cells, 1, cfg.Count, 0, 0.08, sides{})
	extended := false
	extend := func([]contract.Cell, int, int) (sides, error) { extended = true; return all, nil }
	v, _, _, notes, err := settle(context.Background(), cfg, all, cells, time.Minute, time.Now().Add(time.Second), extend)
	if err != nil {
		t.Fatal(err)
	}
	if extended || v.Outcome() != judge.Inconclusive || !strings.Contains(strings.Join(notes, "\n"), "past the --budget") {
		t.Errorf("extended %v, outcome %v, notes %q", extended, v.Outcome(), notes)
	}
}
