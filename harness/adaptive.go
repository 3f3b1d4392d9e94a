package harness

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/judge"
)

// MaxLooks is how many times a compare judges its rounds at most: after the first
// --count rounds, and after each batch of --count more rounds that it adds to the
// cells still inconclusive.
const MaxLooks = 3

// lookAlpha is the significance level of each of looks looks that keeps the chance
// of a false regression over all of them at alpha: Pocock's boundary for alpha =
// 0.05 (0.0294 for two looks, 0.0221 for three), and alpha/looks (Bonferroni, more
// conservative) for any other alpha. Holm's correction over the pairs applies at
// each look on top of it.
func lookAlpha(alpha float64, looks int) float64 {
	pocock05 := []float64{0.05, 0.0294, 0.0221, 0.0182, 0.0158}
	if alpha == 0.05 && looks >= 1 && looks <= len(pocock05) {
		return pocock05[looks-1]
	}
	return alpha / float64(max(looks, 1))
}

// extendFunc runs count more rounds, numbered from first on, of the given cells on
// both sides and returns every result so far (the earlier ones too).
type extendFunc func(cells []contract.Cell, first, count int) (sides, error)

// settle judges the first rounds and, while pairs are inconclusive, adds --count
// rounds to the cells that have them, up to MaxLooks looks in all and only while
// the next batch fits in what is left of the budget (estimated from the first
// rounds). perCell is the time one round of one cell took on both sides.
func settle(ctx context.Context, cfg CompareConfig, measured sides, cells []contract.Cell, perCell time.Duration, deadline time.Time, extend extendFunc) (*judge.Verdict, *judge.Grid, sides, []string, error) {
	looks := 1
	if extend != nil && cfg.Budget > 0 {
		looks = MaxLooks
	}
	opts := cfg.Options
	opts.Alpha = lookAlpha(cfg.Alpha, looks)
	var notes []string
	if looks > 1 {
		notes = append(notes, fmt.Sprintf("adaptive: up to %d looks, each at α = %.4g so that a false regression over all of them stays under %g (%s)",
			looks, opts.Alpha, cfg.Alpha, map[bool]string{true: "Pocock", false: "Bonferroni"}[cfg.Alpha == 0.05]))
	}
	byLabel := map[string]contract.Cell{}
	for _, c := range cells {
		byLabel[c.Name()] = c
	}
	rounds := cfg.Count
	for look := 1; ; look++ {
		v, g, err := judge.Compare(measured.base, measured.head, measured.units, opts)
		if err != nil {
			return nil, nil, measured, notes, err
		}
		var open []contract.Cell
		for _, f := range v.Findings {
			if c, ok := byLabel[f.Cell]; ok && f.Status == judge.Inconclusive && !slices.Contains(open, c) {
				open = append(open, c)
			}
		}
		if len(open) == 0 || look >= looks || ctx.Err() != nil {
			if len(open) > 0 && looks > 1 {
				notes = append(notes, fmt.Sprintf("after %d rounds and %d looks, %d cells are still inconclusive: run with a larger --budget or --count", rounds, look, len(open)))
			}
			return v, g, measured, notes, nil
		}
		cost := perCell * time.Duration(len(open)*cfg.Count)
		if time.Now().Add(cost).After(deadline) {
			notes = append(notes, fmt.Sprintf("%d cells still inconclusive after %d rounds; %d more rounds of them would take about %v, past the --budget of %v",
				len(open), rounds, cfg.Count, cost.Round(time.Second), cfg.Budget))
			return v, g, measured, notes, nil
		}
		cfg.logger().Info("adding rounds to inconclusive cells", "cells", len(open), "rounds", cfg.Count, "look", look+1)
		if measured, err = extend(open, rounds+1, cfg.Count); err != nil {
			return nil, nil, measured, notes, err
		}
		rounds += cfg.Count
		notes = append(notes, fmt.Sprintf("look %d: %d inconclusive cells got rounds %d–%d", look+1, len(open), rounds-cfg.Count+1, rounds))
	}
}
