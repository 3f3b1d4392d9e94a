package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/backfill-bench/backfill-bench/harness"
	"github.com/backfill-bench/backfill-bench/harness/judge"
)

// thresholdFlag collects unit=percent lists, checked as they are given and applied
// after the thresholds file.
type thresholdFlag []string

func (f *thresholdFlag) String() string { return strings.Join(*f, ",") }
func (f *thresholdFlag) Set(v string) error {
	if err := (judge.Thresholds{}).Set(v); err != nil {
		return err
	}
	*f = append(*f, v)
	return nil
}

// analysisFlags are the flags of the statistics, shared by compare and nightly.
type analysisFlags struct {
	thresholds thresholdFlag
	file       *string
}

// bindAnalysis binds the thresholds, correction and alpha into o.
func bindAnalysis(fs *flag.FlagSet, o *judge.Options) *analysisFlags {
	a := &analysisFlags{}
	o.Thresholds = judge.DefaultThresholds()
	fs.Var(&a.thresholds, "threshold", "comma-separated unit=percent changes that count, overriding the defaults (steady-rows/s=3%,steady-cpu-ns/row=3%,barrier-p50-sec=10%,write-amp=2%,job-allocs/op=2%,state-B/barrier=1%,state-rows/barrier=1%,persist-B/op=1%,state/mv-bytes=1%); 0% drops a unit")
	a.file = fs.String("thresholds-file", "", "a JSON `file` of thresholds, applied before --threshold: unit → percent, or {\"units\": {unit: percent}, \"cells\": [{\"cell\": regexp, \"unit\": unit, \"threshold\": percent}]} (see thresholds.json)")
	fs.StringVar(&o.Correction, "correction", judge.Holm, "multiple-testing correction over all judged (cell, metric) pairs: holm or bh")
	fs.Float64Var(&o.Alpha, "alpha", judge.DefaultAlpha, "significance level after correction")
	fs.BoolVar(&o.AcrossMachines, "across-machines", false, "compare results of different machine fingerprints, which are otherwise kept apart (the verdict says so)")
	return a
}

// apply applies the thresholds file, then the --threshold lists, over o's.
func (a *analysisFlags) apply(o *judge.Options) error {
	if *a.file != "" {
		if err := o.Load(*a.file); err != nil {
			return usageError{err}
		}
	}
	for _, t := range a.thresholds {
		o.Thresholds.Set(t) // checked when parsed
	}
	return nil
}

func runCompare(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	cfg := harness.CompareConfig{Output: output(stdout, stderr)}
	given := bindMatrix(fs, &cfg.Measure)
	fs.IntVar(&cfg.Count, "count", harness.PRSuite().Count, "rounds: runs of every cell on each side, a pair per round (see --pairing); at the adaptive α corrected over the quick suite's 20 judged pairs, 11 rounds pass the paired test only if every round agrees, 12 leave room for one, so that a first look can decide")
	fs.IntVar(&cfg.Confirm, "confirm", harness.PRSuite().Confirm, "batches of --count runs to re-run suspected regressions with before the verdict stands (0: none)")
	fs.StringVar(&cfg.CellsFromDiff, "cells-from-diff", "", "a `file` of rules from changed paths to extra cells (e.g. ci/cells-by-path.json): the matrix gains the cells the change may touch")
	fs.DurationVar(&cfg.Budget, "budget", harness.PRSuite().Budget, "wall time the compare may take, builds included: cells still inconclusive get --count more rounds (up to 3 looks, each at a lower α) while they fit (0: no rounds are added)")
	analysis := bindAnalysis(fs, &cfg.Options)
	fs.StringVar(&cfg.Out, "out", "", "comparison `directory` (default compare/<base>..<head>); it must be new or empty")
	fs.BoolVar(&cfg.Force, "force", false, "replace the comparison directory if it holds an earlier compare's output")
	fs.BoolVar(&cfg.NoPlots, "no-plots", false, "do not draw plots")
	fs.StringVar(&cfg.ExpectedRegression, "expected-regression", "", "the `reason` a regression is expected (the PR's expected-regression label): a confirmed regression then exits 0, the reason recorded in verdict.json and report.md")
	fs.Usage = func() {
		io.WriteString(fs.Output(), `usage: benchrun compare [flags] BASE [HEAD]

Compares HEAD with BASE and gives a verdict: exit 0 no regression (every judged
change shown to be within its threshold), 1 regression (or a judged cell whose
job failed in head), 2 usage or build error or nothing judged, 3 inconclusive (no
regression found, but some change could not be told from one beyond its
threshold: run more rounds; or a judged cell is on one side only). Each side is a git ref, a results file or a results
directory; HEAD defaults to the working tree. Refs are checked out in temporary git
worktrees, built, and run on the same cells interleaved.

`)
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, stderr, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 || len(pos) > 2 {
		return usageError{fmt.Errorf("compare: want BASE [HEAD], got %d arguments", len(pos))}
	}
	cfg.Base = pos[0]
	if len(pos) == 2 {
		cfg.Head = pos[1]
	}
	suite := measuredSuite(harness.PRSuite(), cfg.By)
	if _, err := applySuite(fs, suite, &cfg.Measure, given); err != nil {
		return err
	}
	if err := applyStatistics(fs, suite, &cfg.Options, analysis); err != nil {
		return err
	}
	applyCompare(fs, suite, &cfg)
	cfg.CommandLine = append([]string{"benchrun", "compare"}, args...)
	_, err = harness.Compare(ctx, cfg)
	if errors.Is(err, harness.ErrInconclusive) {
		return exitError{3, err}
	}
	if err = usageOf(err); err != nil && !errors.Is(err, harness.ErrRegression) && exitCode(err) != 2 {
		return exitError{2, err} // a build or run failure is not a verdict
	}
	return err
}

// parseInterspersed parses flags that may come before, between or after the
// positional arguments, which it returns.
func parseInterspersed(fs *flag.FlagSet, stderr io.Writer, args []string) ([]string, error) {
	fs.SetOutput(stderr)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err}
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
