package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime"

	"github.com/backfill-bench/backfill-bench/bench/crash"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/scankind"
)

func runCrashTest(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("crashtest", flag.ContinueOnError)
	cfg := crash.CampaignConfig{Stdout: stdout, Logger: slog.New(slog.NewTextHandler(stderr, nil))}
	fs.IntVar(&cfg.Points, "points", 50, "random crash scenarios per combination of scan and persist mode")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "scenario i uses seed+i; the same seed gives the same scenarios")
	fs.Int64Var(&cfg.Rows, "rows", 3000, "rows of each job's upstream table")
	fs.IntVar(&cfg.Parallel, "parallel", runtime.GOMAXPROCS(0), "scenarios run at once")
	var m contract.Matrix
	m.Persist, m.Scans = []bool{true, false}, scankind.Recoverable() // snapshot cannot recover yet
	given := map[string]string{}
	for _, d := range []string{"persist", "scan"} {
		fs.Func(d, "comma-separated "+d+" values (default "+m.Get(d)+")", func(v string) error {
			given[d] = v
			return m.Set(d, v)
		})
	}
	fs.Usage = func() {
		io.WriteString(fs.Output(), `usage: benchrun crashtest [flags]

Runs random power-loss scenarios on small backfill jobs: each one cuts the power at
a random point (mid-epoch, before a commit, after a commit; keeping only synced data
or some unsynced data too), sometimes twice, sometimes rescaling a per-vnode job,
recovers, checks the committed state against the persisted progress, and finishes
the job with B == A. Prints one line per scan and persist mode; exits 1 on any
inconsistency, naming the command that reproduces it.

`)
		fs.PrintDefaults()
	}
	if err := parse(fs, stderr, args); err != nil {
		return err
	}
	if cfg.Parallel < 1 {
		return usageError{fmt.Errorf("--parallel %d: want at least 1 scenario at once", cfg.Parallel)}
	}
	cfg.Persist, cfg.Scans = m.Persist, m.Scans
	err := crash.Campaign(ctx, cfg)
	if err != nil && !errors.Is(err, crash.ErrInconsistent) && ctx.Err() == nil {
		return usageError{err}
	}
	return err
}
