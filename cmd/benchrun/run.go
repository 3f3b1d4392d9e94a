package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness"
	"github.com/backfill-bench/backfill-bench/harness/runner"
	"github.com/backfill-bench/backfill-bench/workloads"
)

// matrixFlags are the dimension flags given, each a comma-separated list, applied
// over a base matrix once every flag is parsed.
type matrixFlags map[string]string

func (g matrixFlags) apply(m *contract.Matrix) {
	for d, v := range g {
		m.Set(d, v) // checked when parsed
	}
	m.Canonicalize(workloads.Canonical) // checked when parsed
}

// dimensionFlag is one dimension's flag.
type dimensionFlag struct {
	given matrixFlags
	dim   string
}

func (f dimensionFlag) String() string { return f.given[f.dim] }
func (f dimensionFlag) Set(v string) error {
	var scratch contract.Matrix
	if err := scratch.Set(f.dim, v); err != nil {
		return err
	}
	if err := scratch.Canonicalize(workloads.Canonical); err != nil {
		return err
	}
	f.given[f.dim] = v
	return nil
}

// listFlag is a comma-separated list of strings.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	*l = nil
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

func runRun(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	cfg, err := runConfig(stdout, stderr, args)
	if err != nil {
		return err
	}
	_, err = harness.Run(ctx, cfg)
	return usageOf(err)
}

// runConfig binds run's flags: the configuration runRun hands to harness.Run.
func runConfig(stdout, stderr io.Writer, args []string) (harness.RunConfig, error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	cfg := harness.RunConfig{Output: output(stdout, stderr)}
	given := bindMatrix(fs, &cfg.Measure)
	base := fs.String("matrix", "quick", "the suite whose matrix the dimension flags change and whose defaults the other flags override: quick (the default), nightly, scale (10⁵ to 10⁸ rows, for benchrun fit), or pr, noise and instructions (compare's, noise's and --measure instructions')")
	fs.IntVar(&cfg.Count, "count", 0, "rounds: runs of every cell, interleaved (default 8 for the quick suite, 6 for nightly and scale: the fewest for a 95 % interval)")
	fs.StringVar(&cfg.Out, "out", "", "results `directory` (default results/runs/<UTC time>-<commit>); it must be new or empty")
	fs.BoolVar(&cfg.Force, "force", false, "replace the results directory --out names if it holds an earlier run's output")
	fs.BoolVar(&cfg.DryRun, "dry-run", false, "print the plan and exit")
	fs.BoolVar(&cfg.RawCopy, "raw-copy", false, "also run the baselines, --count times after the cells: every table's append-order copy (the storage's limit), every cell's replay (its epoch batches and syncs without the executor) and scan-only read; the summary divides each cell by them and fit's scale plot draws them (default on for --matrix scale)")
	fs.BoolVar(&cfg.NoPlots, "no-plots", false, "do not draw plots")
	shard := fs.String("shard", "", "run only shard `i/n` of the matrix: a deterministic part, balanced by estimated cost")
	fs.Usage = func() {
		io.WriteString(fs.Output(), "usage: benchrun run [flags]\n\nRuns the benchmark matrix, each job in its own process, rounds interleaved, and\nwrites benchfmt results, traces and a summary. With no flags: the quick suite.\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, stderr, args); err != nil {
		return cfg, err
	}
	var err error
	if cfg.Shard, err = runner.ParseShard(*shard); err != nil {
		return cfg, usageError{err}
	}
	suite, err := harness.SuiteNamed(*base)
	if err != nil {
		return cfg, usageError{fmt.Errorf("--matrix: %w", err)}
	}
	if *base == "quick" {
		suite = measuredSuite(suite, cfg.By)
	}
	profiles, err := applySuite(fs, suite, &cfg.Measure, given)
	if err != nil {
		return cfg, err
	}
	if !givenFlags(fs)["raw-copy"] {
		cfg.RawCopy = suite.RawCopy
	}
	if suite.Recoveries {
		cfg.Recoveries = harness.NightlyRecoveries(cfg.Matrix, profiles)
	}
	cfg.CommandLine = append([]string{"benchrun", "run"}, args...)
	return cfg, nil
}

// positiveDuration is a duration flag that must be > 0.
type positiveDuration struct{ d *time.Duration }

func (p positiveDuration) String() string {
	if p.d == nil {
		return ""
	}
	return p.d.String()
}

func (p positiveDuration) Set(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		return err
	}
	if d <= 0 {
		return fmt.Errorf("%v: must be > 0", d)
	}
	*p.d = d
	return nil
}

// bindMatrix binds the flags that say what to run, shared by run, compare and
// nightly; the dimension flags given are returned, to apply over a base matrix.
func bindMatrix(fs *flag.FlagSet, m *harness.Measure) matrixFlags {
	given := matrixFlags{}
	for _, d := range contract.Dims() {
		fs.Var(dimensionFlag{given, d.Name}, d.Name, "comma-separated "+d.Help)
	}
	fs.Var((*listFlag)(&m.ProfileFiles), "profile-file", "comma-separated profile `files` to add to the built-in profiles")
	m.Timeout = runner.DefaultTimeout
	fs.Var(positiveDuration{&m.Timeout}, "timeout", "a run taking longer than this `duration` is killed and recorded as failed")
	fs.StringVar(&m.Src, "src", ".", "a `directory` in the backfill-bench checkout to build the benchmarks from")
	fs.StringVar(&m.By, "measure", harness.MeasureTime, "what to measure: `time` (wall clock and CPU of each job) or instructions (each job's window counted under valgrind's callgrind: steady on a busy machine; needs valgrind, Linux on amd64 or arm64; the quick suite is then one cell, mem narrow persist on at 30000 rows, 5 rounds)")
	fs.StringVar(&m.Pairing, "pairing", "", "how the two runs of a pair (base and head; persist off and on) share the machine: `duet` (at once, each on half the CPUs, trading them every 20 ms: much less noise on a VM) or sequential (one after the other, each with all CPUs); default duet where the machine can pin processes to 2 CPUs, except for --matrix nightly and scale, whose absolute figures are of a job alone")
	return given
}

func runProfiles(_ context.Context, stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("profiles", flag.ContinueOnError)
	var files listFlag
	fs.Var(&files, "profile-file", "comma-separated profile `files` to list with the built-in ones")
	if err := parse(fs, stderr, args); err != nil {
		return err
	}
	set, err := profile.NewSet(files)
	if err != nil {
		return usageError{err}
	}
	return set.WriteList(stdout)
}

// output is where a command talks: results on stdout; progress, drawn as a bar on
// a terminal, and logs on stderr.
func output(stdout, stderr io.Writer) harness.Output {
	return harness.Output{Stdout: stdout, Progress: stderr, Terminal: isTerminal(stderr), Logger: slog.New(slog.NewTextHandler(stderr, nil))}
}

// isTerminal reports whether w is a character device, where a progress bar can be
// redrawn in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
