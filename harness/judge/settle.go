package judge

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/harness/stats"
)

// Pair is both sides' results in memory, with their units.
type Pair struct {
	Base, Head Side
	Units      benchfmt.UnitMetadataMap
}

// Rounds runs more rounds of a compare's cells (named as findings name them) on
// both sides: what Settle adds rounds and confirms regressions through.
type Rounds interface {
	// More runs count more rounds, numbered from first on, of cells on both sides
	// and returns every result so far (the earlier ones too).
	More(ctx context.Context, cells []string, first, count int) (Pair, error)
	// Again runs rounds fresh rounds of cells in a pass of their own and returns
	// those results only.
	Again(ctx context.Context, cells []string, rounds int) (Pair, error)
}

// SettleConfig is what Settle judges by, besides the results.
type SettleConfig struct {
	Options                // Alpha is over every look; each look is judged at LookAlpha of it
	Count    int           // rounds of the first pass, and of each batch added
	Cells    []string      // the cells Rounds can run, in the matrix's order
	Budget   time.Duration // the compare's wall time; 0: no rounds are added
	Deadline time.Time     // when the budget ends
	PerCell  time.Duration // what one round of one cell took on both sides
	// Confirm is how many batches of Count rounds re-run suspected regressions
	// (0: none); the confirmation runs at least enough to reach its alpha.
	Confirm    int
	Base, Head string   // the sides' labels
	Notes      []string // the sides' own notes, before Settle's
	// FailedInHead names the benchmarks whose job failed on the head.
	FailedInHead []string
	// ExpectedRegression, when not empty, is why a regression is expected: a
	// confirmed regression then passes, with the reason in the verdict.
	ExpectedRegression string
	Log                *slog.Logger // nil: none
}

// MaxLooks is how many times a compare judges its rounds at most: after the first
// --count rounds, and after each batch of --count more rounds that it adds to the
// cells still inconclusive.
const MaxLooks = 3

// LookAlpha is the significance level of each of looks looks that keeps the chance
// of a false regression over all of them at alpha: Pocock's boundary for alpha =
// 0.05 (0.0294 for two looks, 0.0221 for three), and alpha/looks (Bonferroni, more
// conservative) for any other alpha. Holm's correction over the pairs applies at
// each look on top of it.
func LookAlpha(alpha float64, looks int) float64 {
	pocock05 := []float64{0.05, 0.0294, 0.0221, 0.0182, 0.0158}
	if alpha == 0.05 && looks >= 1 && looks <= len(pocock05) {
		return pocock05[looks-1]
	}
	return alpha / float64(max(looks, 1))
}

// Settle judges the first rounds and settles the verdict: while pairs are
// inconclusive it adds Count rounds to their cells through more (up to MaxLooks
// looks, while the next batch fits in the budget), then re-runs the cells of
// suspected regressions and keeps only those seen again, and marks the failed
// jobs and an expected regression. more nil: the results are all there will be.
// It returns the final verdict, its grid and every result judged; the verdict is
// not nil with an error only when the confirmation failed.
func Settle(ctx context.Context, first Pair, cfg SettleConfig, more Rounds) (*Verdict, *Grid, Pair, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	v, g, measured, notes, err := addRounds(ctx, cfg, first, more)
	if err != nil {
		return nil, nil, measured, err
	}
	notes = append(slices.Clone(cfg.Notes), notes...)
	notes = append(notes, stats.ShortCells(append(slices.Clip(measured.Base.Results), measured.Head.Results...))...)
	v.Base, v.Head = cfg.Base, cfg.Head
	v.Notes = append(v.Notes, notes...)
	v.markFailed(cfg.FailedInHead)
	if v.Regression && more != nil && cfg.Confirm > 0 {
		if err := confirm(ctx, v, cfg, more); err != nil {
			return v, g, measured, err
		}
	}
	if v.Regression && len(v.FailedInHead) == 0 && cfg.ExpectedRegression != "" {
		v.ExpectedRegression = cfg.ExpectedRegression
	}
	return v, g, measured, nil
}

// addRounds judges the first rounds and, while pairs are inconclusive, adds Count
// rounds to the cells that have them, up to MaxLooks looks in all and only while
// the next batch fits in what is left of the budget (estimated from the first
// rounds).
func addRounds(ctx context.Context, cfg SettleConfig, measured Pair, more Rounds) (*Verdict, *Grid, Pair, []string, error) {
	looks := 1
	if more != nil && cfg.Budget > 0 {
		looks = MaxLooks
	}
	opts := cfg.Options
	opts.Alpha = LookAlpha(cfg.Alpha, looks)
	var notes []string
	if looks > 1 {
		notes = append(notes, fmt.Sprintf("adaptive: up to %d looks, each at α = %.4g so that a false regression over all of them stays under %g (%s)",
			looks, opts.Alpha, cfg.Alpha, map[bool]string{true: "Pocock", false: "Bonferroni"}[cfg.Alpha == 0.05]))
	}
	rounds := cfg.Count
	for look := 1; ; look++ {
		v, g, err := Compare(measured.Base, measured.Head, measured.Units, opts)
		if err != nil {
			return nil, nil, measured, notes, err
		}
		var open []string
		for _, f := range v.Findings {
			if slices.Contains(cfg.Cells, f.Cell) && f.Status == Inconclusive && !slices.Contains(open, f.Cell) {
				open = append(open, f.Cell)
			}
		}
		if len(open) == 0 || look >= looks || ctx.Err() != nil {
			if len(open) > 0 && looks > 1 {
				notes = append(notes, fmt.Sprintf("after %d rounds and %d looks, %d cells are still inconclusive: run with a larger --budget or --count", rounds, look, len(open)))
			}
			return v, g, measured, notes, nil
		}
		cost := cfg.PerCell * time.Duration(len(open)*cfg.Count)
		if time.Now().Add(cost).After(cfg.Deadline) {
			notes = append(notes, fmt.Sprintf("%d cells still inconclusive after %d rounds; %d more rounds of them would take about %v, past the --budget of %v",
				len(open), rounds, cfg.Count, cost.Round(time.Second), cfg.Budget))
			return v, g, measured, notes, nil
		}
		cfg.Log.Info("adding rounds to inconclusive cells", "cells", len(open), "rounds", cfg.Count, "look", look+1)
		if measured, err = more.More(ctx, open, rounds+1, cfg.Count); err != nil {
			return nil, nil, measured, notes, err
		}
		rounds += cfg.Count
		notes = append(notes, fmt.Sprintf("look %d: %d inconclusive cells got rounds %d–%d", look+1, len(open), rounds-cfg.Count+1, rounds))
	}
}

// confirm re-runs the cells of suspected regressions in a pass of their own and
// keeps a regression only if the fresh samples, judged on their own, show it again.
func confirm(ctx context.Context, v *Verdict, cfg SettleConfig, more Rounds) error {
	regressed := v.RegressedCells()
	var cells []string
	for _, name := range regressed {
		if slices.Contains(cfg.Cells, name) {
			cells = append(cells, name)
		}
	}
	judged := 0 // the pairs the confirmation will judge: those of the cells re-run
	for _, f := range v.Findings {
		if f.Status != NotJudged && slices.Contains(regressed, f.Cell) {
			judged++
		}
	}
	rounds := ConfirmRounds(cfg.Count, cfg.Confirm, v.Alpha, judged)
	again, err := more.Again(ctx, cells, rounds)
	if err != nil {
		return err
	}
	av, _, err := Compare(again.Base, again.Head, again.Units, Options{Thresholds: cfg.Thresholds, Correction: cfg.Correction, Alpha: v.Alpha})
	if err != nil {
		return err
	}
	keepConfirmed(v, av)
	v.Notes = append(v.Notes, fmt.Sprintf("suspected regressions were re-run %d× on both sides (base-confirm.txt, head-confirm.txt) and kept only if seen again", rounds))
	return nil
}

// ConfirmRounds is how many rounds the confirmation runs: confirm batches of
// count, but at least enough for the paired test to reach alpha ÷ the judged
// pairs, the strictest step of Holm's or BH's correction (with 6 rounds its
// smallest p, 0.031, could never pass the adaptive compare's α = 0.0221, so no
// regression was ever confirmed).
func ConfirmRounds(count, confirm int, alpha float64, judged int) int {
	return max(count*confirm, stats.MinPairedRounds(alpha/float64(max(judged, 1))))
}
