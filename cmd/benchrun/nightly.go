package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness"
	"github.com/backfill-bench/backfill-bench/internal/files"
)

func runNightly(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("nightly", flag.ContinueOnError)
	profiles, err := profile.NewSet(nil)
	if err != nil {
		return err
	}
	cfg := harness.NightlyConfig{Run: harness.RunConfig{Output: output(stdout, stderr)}}
	cfg.Run.Matrix = harness.NightlyMatrix(profiles)
	given := bindMatrix(fs, &cfg.Run.Measure)
	fs.IntVar(&cfg.Run.Count, "count", harness.NightlyCount, "rounds: runs of every cell, interleaved")
	fs.StringVar(&cfg.History, "history", "", "history `directory` (default results/history)")
	fs.StringVar(&cfg.Results, "results", "", "record this results `file` (merged shards, say) instead of running the matrix")
	fs.StringVar(&cfg.Analysis.Baseline, "baseline", "", "the `night` to measure drift against (default: the history's baseline file, else the oldest night)")
	analysis := bindAnalysis(fs, &cfg.Analysis.Options)
	fs.BoolVar(&cfg.Run.NoPlots, "no-plots", false, "do not draw the run's plots (the trends are drawn anyway)")
	fs.Usage = func() {
		io.WriteString(fs.Output(), `usage: benchrun nightly [flags]

Runs the nightly matrix (every profile marked nightly), records the results in the
history of this machine, looks for change points, a regression in the newest night
and drift from the pinned baseline, draws the trends and writes nightly.md.
Exit 0: the newest night starts no regression; 1: it does; 2: usage or run error.

`)
		fs.PrintDefaults()
	}
	if err := parse(fs, stderr, args); err != nil {
		return err
	}
	if err := analysis.apply(&cfg.Analysis.Options); err != nil {
		return err
	}
	given.apply(&cfg.Run.Matrix)
	if cfg.Run.Pairing == "" { // a night's absolute figures are compared with earlier nights': the whole machine, as before
		cfg.Run.Pairing = "sequential"
	}
	cfg.Run.Recoveries = harness.NightlyRecoveries(cfg.Run.Matrix, profiles)
	cfg.Run.CommandLine = append([]string{"benchrun", "nightly"}, args...)
	if cfg.Results != "" {
		if _, err := os.Stat(cfg.Results); err != nil {
			return usageError{fmt.Errorf("--results: %w", err)}
		}
	}
	_, err = harness.Nightly(ctx, cfg)
	if err = usageOf(err); err != nil && !errors.Is(err, harness.ErrRegression) && exitCode(err) != 2 {
		return exitError{2, err}
	}
	return err
}

func runMerge(_ context.Context, stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	out := fs.String("o", "", "write to this `file` instead of stdout")
	fs.Usage = func() {
		io.WriteString(fs.Output(), "usage: benchrun merge [-o FILE] RESULTS...\n\nCombines results files (of shards, say) into one.\n\n")
		fs.PrintDefaults()
	}
	paths, err := parseInterspersed(fs, stderr, args)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return usageError{errors.New("merge: want results files")}
	}
	data, err := contract.Merge(paths...)
	if err != nil {
		return usageError{err}
	}
	if *out == "" {
		_, err = stdout.Write(data)
		return err
	}
	return files.WriteAtomic(*out, data)
}
