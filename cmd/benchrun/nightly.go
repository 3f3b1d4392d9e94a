package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/backfill-bench/backfill-bench/harness"
	"github.com/backfill-bench/backfill-bench/internal/files"
)

func runNightly(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	cfg, err := nightlyConfig(stdout, stderr, args)
	if err != nil {
		return err
	}
	_, err = harness.Nightly(ctx, cfg)
	if err = usageOf(err); err != nil && !errors.Is(err, harness.ErrRegression) && exitCode(err) != 2 {
		return exitError{2, err}
	}
	return err
}

// nightlyConfig binds nightly's flags over the nightly suite: the configuration
// runNightly hands to harness.Nightly.
func nightlyConfig(stdout, stderr io.Writer, args []string) (harness.NightlyConfig, error) {
	fs := flag.NewFlagSet("nightly", flag.ContinueOnError)
	suite := harness.NightlySuite()
	cfg := harness.NightlyConfig{Run: harness.RunConfig{Output: output(stdout, stderr)}}
	given := bindMatrix(fs, &cfg.Run.Measure)
	fs.IntVar(&cfg.Run.Count, "count", suite.Count, "rounds: runs of every cell, interleaved")
	fs.StringVar(&cfg.History, "history", "", "history `directory` (default results/history)")
	fs.StringVar(&cfg.Results, "results", "", "record this results `file` (merged shards, say) instead of running the matrix")
	fs.StringVar(&cfg.Analysis.Baseline, "baseline", "", "the `night` to measure drift against (default: the history's baseline file, else the oldest night)")
	analysis := bindAnalysis(fs, &cfg.Analysis.Options)
	fs.BoolVar(&cfg.Run.NoPlots, "no-plots", false, "do not draw the run's plots (the trends are drawn anyway)")
	fs.Usage = func() {
		io.WriteString(fs.Output(), `usage: benchrun nightly [flags]

Runs the nightly matrix (every profile marked nightly, --profile-file's too),
records the results in the history of this machine, looks for change points, a
regression in the newest night and drift from the pinned baseline, draws the
trends and writes nightly.md.
Exit 0: the newest night starts no regression; 1: it does; 2: usage or run error.

`)
		fs.PrintDefaults()
	}
	if err := parse(fs, stderr, args); err != nil {
		return cfg, err
	}
	profiles, err := applySuite(fs, suite, &cfg.Run.Measure, given)
	if err != nil {
		return cfg, err
	}
	if err := applyStatistics(fs, suite, &cfg.Analysis.Options, analysis); err != nil {
		return cfg, err
	}
	if suite.Recoveries {
		cfg.Run.Recoveries = harness.NightlyRecoveries(cfg.Run.Matrix, profiles)
	}
	cfg.Run.CommandLine = append([]string{"benchrun", "nightly"}, args...)
	if cfg.Results != "" {
		if _, err := os.Stat(cfg.Results); err != nil {
			return cfg, usageError{fmt.Errorf("--results: %w", err)}
		}
	}
	return cfg, nil
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
	data, err := harness.MergeResults(paths)
	if err != nil {
		return usageError{err}
	}
	if *out == "" {
		_, err = stdout.Write(data)
		return err
	}
	return files.WriteAtomic(*out, data)
}
