package history

import (
	"math/rand/v2"
	"testing"
)

func noisy(rng *rand.Rand, n int, level func(i int) float64, noise float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = level(i) * (1 + noise*rng.NormFloat64())
	}
	return out
}

// TestChangePointStep: a 5 % step in 1 % noise is found at its index.
func TestChangePointStep(t *testing.T) {
	const seeds, n, at = 100, 30, 18
	hits, near, extra := 0, 0, 0
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 1))
		series := noisy(rng, n, func(i int) float64 {
			if i >= at {
				return 105
			}
			return 100
		}, 0.01)
		cps := ChangePoints(series, ChangePointConfig{Seed: seed})
		found, close := false, false
		for _, cp := range cps {
			switch {
			case cp.Index == at:
				found = true
			case cp.Index == at-1 || cp.Index == at+1:
				close = true
			default:
				extra++
			}
		}
		if found {
			hits++
		} else if close {
			near++
		}
	}
	t.Logf("5%% step in 1%% noise, n=%d, step at %d: found at the exact index in %d of %d series, one off in %d; %d other change points", n, at, hits, seeds, near, extra)
	if hits < 95 {
		t.Errorf("hit rate %d/%d, want ≥ 95", hits, seeds)
	}
	if extra > 10 {
		t.Errorf("%d spurious change points beside the step", extra)
	}
}

// TestChangePointNoise: series of pure noise rarely get a change point.
func TestChangePointNoise(t *testing.T) {
	const seeds, n = 200, 30
	alarms := 0
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 2))
		if len(ChangePoints(noisy(rng, n, func(int) float64 { return 100 }, 0.01), ChangePointConfig{Seed: seed})) > 0 {
			alarms++
		}
	}
	rate := float64(alarms) / seeds
	t.Logf("pure noise, n=%d: %d of %d series with a change point (%.1f%%; α = 1%% per test)", n, alarms, seeds, 100*rate)
	if rate > 0.03 {
		t.Errorf("false-alarm rate %.3f, want about α = 0.01", rate)
	}
}

func TestChangePointEdges(t *testing.T) {
	for _, series := range [][]float64{nil, {1}, {1, 2, 3, 4, 5}, {3, 3, 3, 3, 3, 3, 3, 3}} {
		if cps := ChangePoints(series, ChangePointConfig{}); len(cps) != 0 {
			t.Errorf("ChangePoints(%v) = %v, want none", series, cps)
		}
	}
	// Two steps are both found.
	rng := rand.New(rand.NewPCG(9, 9))
	series := noisy(rng, 45, func(i int) float64 { return 100 + 10*float64(i/15) }, 0.01)
	cps := ChangePoints(series, ChangePointConfig{})
	if len(cps) != 2 || cps[0].Index != 15 || cps[1].Index != 30 {
		t.Errorf("two steps at 15 and 30: found %v", cps)
	}
}
