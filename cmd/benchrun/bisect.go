package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/backfill-bench/backfill-bench/harness"
	"github.com/backfill-bench/backfill-bench/harness/bisect"
	"github.com/backfill-bench/backfill-bench/harness/testbed"
)

// Exit statuses of bisect --step, as `git bisect run` reads them: 0 good, 1 bad,
// 125 skip; 128 aborts the bisect.
const (
	exitSkip  = 125
	exitAbort = 128
)

func runBisect(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("bisect", flag.ContinueOnError)
	cfg := bisect.Config{Compare: harness.CompareConfig{Output: output(stdout, stderr)}}
	given := bindMatrix(fs, &cfg.Compare.Measure)
	fs.StringVar(&cfg.Cell, "cell", "", "the cells to judge: a cell's full name (as a nightly alert gives it) or a regular expression over the matrix's cell names (required)")
	fs.BoolVar(&cfg.Step, "step", false, "judge only HEAD of --src against GOOD, for `git bisect run`: exit 0 good, 1 bad, 125 skip (does not build, or inconclusive), 128 error")
	fs.StringVar(&cfg.Cache, "cache", "", "where each commit's comparison is kept (`directory`; default <module>/results/runs/bisect-cache)")
	fs.IntVar(&cfg.Compare.Count, "count", harness.PRSuite().Count, "rounds of each comparison with GOOD (see benchrun compare --count)")
	fs.IntVar(&cfg.Compare.Confirm, "confirm", harness.PRSuite().Confirm, "batches of --count runs to re-run a suspected regression with before a commit counts as bad (0: none)")
	fs.DurationVar(&cfg.Compare.Budget, "budget", harness.PRSuite().Budget, "wall time each comparison may take for adaptive rounds (see benchrun compare --budget)")
	analysis := bindAnalysis(fs, &cfg.Compare.Options)
	fs.Usage = func() {
		io.WriteString(fs.Output(), `usage: benchrun bisect GOOD BAD --cell PATTERN [flags]
       benchrun bisect --step GOOD --cell PATTERN [flags]   (as git bisect run's command)

Finds the first commit after GOOD, up to BAD, whose comparison with GOOD regresses
on the given cells: each commit tested is compared with GOOD as benchrun compare
does (paired rounds, thresholds, correction, confirmation), BAD first, then by
halving; a commit that does not build, or whose verdict is inconclusive, is
skipped for its neighbour. Each commit's comparison is cached, so a second search
measures nothing twice. Exit 1 when it names the first bad commit, 0 when BAD does
not regress against GOOD, 3 when the commits that could not be judged hide it,
2 on an error.

With --step it judges HEAD only, for git bisect run (build benchrun first, so that
the bisected commits do not build it):
  go build -o /tmp/benchrun ./cmd/benchrun
  git bisect start BAD GOOD
  git bisect run /tmp/benchrun bisect --step GOOD --cell PATTERN

`)
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, stderr, args)
	if err != nil {
		return stepExit(cfg.Step, err)
	}
	want := map[bool]int{false: 2, true: 1}[cfg.Step]
	if len(pos) != want {
		return stepExit(cfg.Step, usageError{fmt.Errorf("bisect: want GOOD BAD (or GOOD with --step), got %d arguments", len(pos))})
	}
	cfg.Good = pos[0]
	if !cfg.Step {
		cfg.Bad = pos[1]
	}
	suite := measuredSuite(harness.PRSuite(), cfg.Compare.By)
	if _, err := applySuite(fs, suite, &cfg.Compare.Measure, given); err != nil {
		return stepExit(cfg.Step, err)
	}
	if err := applyStatistics(fs, suite, &cfg.Compare.Options, analysis); err != nil {
		return stepExit(cfg.Step, err)
	}
	applyCompare(fs, suite, &cfg.Compare)
	cfg.Compare.CommandLine = append([]string{"benchrun", "bisect"}, args...)
	res, err := bisect.Run(ctx, cfg)
	if cfg.Step {
		return stepExit(true, err)
	}
	switch {
	case errors.Is(err, harness.ErrRegression):
		fmt.Fprintf(stdout, "first bad commit: %s %s\n", res.FirstBad.Hash, res.FirstBad.Subject)
		for _, s := range res.Steps {
			if s.Commit.Hash == res.FirstBad.Hash {
				fmt.Fprintf(stdout, "comparison: %s\n", s.Dir)
			}
		}
		return exitError{1, err}
	case errors.Is(err, bisect.ErrInconclusive):
		fmt.Fprintln(stdout, "the first bad commit is one of (the others could not be judged):")
		for _, c := range res.Candidates {
			fmt.Fprintf(stdout, "  %s %s\n", testbed.ShortHash(c.Hash), c.Subject)
		}
		return exitError{3, err}
	case err == nil:
		fmt.Fprintf(stdout, "%s does not regress against %s on these cells: nothing to bisect\n", cfg.Bad, cfg.Good)
		return nil
	}
	if err = usageOf(err); exitCode(err) != 2 {
		return exitError{2, err}
	}
	return err
}

// stepExit maps a --step outcome to git bisect run's statuses; without --step it
// leaves err as it is.
func stepExit(step bool, err error) error {
	switch {
	case !step || err == nil:
		return err
	case errors.Is(err, flag.ErrHelp):
		return err
	case errors.Is(err, harness.ErrRegression):
		return exitError{1, err}
	case errors.Is(err, bisect.ErrStepSkip):
		return exitError{exitSkip, err}
	}
	return exitError{exitAbort, err}
}
