package main

import (
	"context"
	"flag"
	"io"

	"github.com/backfill-bench/backfill-bench/harness"
)

func runNoise(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("noise", flag.ContinueOnError)
	cfg := harness.NoiseConfig{Output: output(stdout, stderr)}
	given := bindMatrix(fs, &cfg.Measure)
	fs.IntVar(&cfg.Count, "count", harness.NoiseSuite().Count, "rounds; every cell runs twice per round, as a pair (see --pairing)")
	analysis := bindAnalysis(fs, &cfg.Options)
	fs.StringVar(&cfg.Out, "out", "", "results `directory` (default results/noise/<UTC time>-<commit>); it must be new or empty")
	fs.BoolVar(&cfg.Force, "force", false, "replace the results directory if it holds an earlier run's output")
	fs.Usage = func() {
		io.WriteString(fs.Output(), `usage: benchrun noise [flags]

Measures what this machine can resolve: an A/A compare of one build. Every cell of
the matrix (default: the quick suite) runs twice per round as a pair; for each
judged metric it prints the spread of single runs, the spread of the paired ratio,
the smallest change a compare of --count rounds could detect, and the rounds a
compare needs to detect a change of the metric's threshold.

`)
		fs.PrintDefaults()
	}
	if err := parse(fs, stderr, args); err != nil {
		return err
	}
	suite := harness.NoiseSuite()
	if _, err := applySuite(fs, suite, &cfg.Measure, given); err != nil {
		return err
	}
	if err := applyStatistics(fs, suite, &cfg.Options, analysis); err != nil {
		return err
	}
	cfg.CommandLine = append([]string{"benchrun", "noise"}, args...)
	_, err := harness.Noise(ctx, cfg)
	return usageOf(err)
}
