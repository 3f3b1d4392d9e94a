// Package harness runs benchrun's commands: each command's flow from its config,
// through runner, judge, render and history, to its outputs.
package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/jobtrace"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/render"
	"github.com/backfill-bench/backfill-bench/harness/runner"
	"github.com/backfill-bench/backfill-bench/harness/stats"
	"github.com/backfill-bench/backfill-bench/harness/testbed"
	"github.com/backfill-bench/backfill-bench/internal/files"
)

// ConfigError is a configuration the user has to fix on the command line.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Output says where a command talks: results and tables on Stdout, progress and logs
// on Progress.
type Output struct {
	Stdout   io.Writer
	Progress io.Writer // progress bar or log lines; nil: none
	Terminal bool      // Progress is a terminal: draw a bar
	Logger   *slog.Logger
}

func (o Output) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// Measure is what to run: the matrix, on which profiles, built from where.
type Measure struct {
	Matrix       contract.Matrix
	ProfileFiles []string
	Count        int           // rounds: every cell runs once per round (on each side)
	Src          string        // a directory in the module checkout to build and attribute
	Timeout      time.Duration // per run (0: runner.DefaultTimeout)
	Pairing      string        // "duet", "sequential" or "": duet where the machine can (runner.DefaultPairing)
	By           string        // MeasureTime ("" too) or MeasureInstructions
}

// measureSetup is a Measure checked once, with its profiles loaded.
type measureSetup struct {
	Measure
	profiles     *profile.Set
	profileFiles []string // absolute
	pairing      runner.Pairing
	instructions *runner.Instructions // nil: wall-clock
}

// setup checks the measure and loads its profiles; errors are ConfigErrors.
// Cells no job can be (more actors than vnodes) are left out, and log says which.
func (m Measure) setup(log *slog.Logger) (*measureSetup, error) {
	bad := func(err error) (*measureSetup, error) { return nil, &ConfigError{err} }
	if m.Count < 1 {
		return bad(fmt.Errorf("--count %d: must be ≥ 1", m.Count))
	}
	if m.Timeout < 0 {
		return bad(fmt.Errorf("--timeout %v: must be > 0", m.Timeout))
	}
	if m.Timeout == 0 {
		m.Timeout = runner.DefaultTimeout
	}
	pairing, err := runner.ParsePairing(m.Pairing)
	if err != nil {
		return bad(err)
	}
	profiles, err := profile.NewSet(m.ProfileFiles)
	if err != nil {
		return bad(fmt.Errorf("--profile-file: %w", err))
	}
	for _, name := range m.Matrix.Profiles {
		if _, err := profiles.Get(name); err != nil {
			return bad(fmt.Errorf("--profile: %w", err))
		}
	}
	if err := m.Matrix.Validate(); err != nil { // before the emptiness: it names the flags that emptied it
		return bad(err)
	}
	if len(m.Matrix.Cells()) == 0 {
		return bad(errors.New("the matrix is empty: every dimension needs a value"))
	}
	for _, sk := range m.Matrix.Impossible() {
		log.Warn("cells skipped: more actors than vnodes", "why", sk)
	}
	s := &measureSetup{Measure: m, profiles: profiles, pairing: pairing}
	if s.instructions, err = m.instructions(context.Background()); err != nil {
		return bad(err)
	}
	for _, f := range m.ProfileFiles {
		a, err := filepath.Abs(f)
		if err != nil {
			return bad(err)
		}
		s.profileFiles = append(s.profileFiles, a)
	}
	return s, nil
}

// passConfig is the runner's configuration of one pass of this measure in dir.
func (s *measureSetup) passConfig(dir, name string, o Output) runner.PassConfig {
	return runner.PassConfig{Dir: dir, Name: name, Profiles: s.profiles, ProfileFiles: s.profileFiles, Timeout: s.Timeout,
		Machine: testbed.InspectMachine(), Progress: o.Progress, Terminal: o.Terminal, Logger: o.logger(), Pairing: s.pairing, Instructions: s.instructions}
}

// RunConfig configures `benchrun run`.
type RunConfig struct {
	Measure
	Output
	Out         string            // results directory; "": <module>/results/runs/<UTC time>-<commit>
	Force       bool              // replace Out if it holds an earlier run's output
	DryRun      bool              // print the plan only
	NoPlots     bool              // skip drawing plots
	Shard       runner.Shard      // run only this part of the matrix (zero: all)
	Binary      string            // a built bench binary to use instead of building one
	RawCopy     bool              // also run the baselines of every cell (append-order copy, replay, scan-only), the references of the scale plot and table
	Recoveries  []runner.Recovery // BenchmarkRecovery runs after the cells (with shards, in shard 1)
	CommandLine []string          // recorded in command.txt
	// What the machine has for the jobs' tables (nil: testbed.MachineRoom): which
	// cells are skipped as too large, so a plan to compare byte for byte fixes it.
	Room func() testbed.Room
}

// RunReport is what a run of the matrix left.
type RunReport struct {
	Dir     string
	Results []*benchfmt.Result
	Rounds  []int              // each result's round
	Extras  []*benchfmt.Result // raw copies and recoveries, run after the cells
	Units   benchfmt.UnitMetadataMap
	Pass    *runner.PassResult
}

// Run runs every cell Count times, interleaved, each job in its own process of the
// bench binary, and writes the results directory: results.txt, traces, the summary
// and the plots. Failed runs are recorded and the rest go on; the error at the end
// says how many failed. A cancelled ctx stops the current run and keeps everything
// finished.
func Run(ctx context.Context, cfg RunConfig) (*RunReport, error) {
	s, err := cfg.Measure.setup(cfg.logger())
	if err != nil {
		return nil, err
	}
	if cfg.Shard.Count > 0 && (cfg.Shard.Index < 1 || cfg.Shard.Index > cfg.Shard.Count) {
		return nil, &ConfigError{fmt.Errorf("--shard %d/%d: want 1 ≤ i ≤ n", cfg.Shard.Index, cfg.Shard.Count)}
	}
	cells := cfg.Matrix.Cells()
	if cfg.Shard.Count > 1 {
		cells = runner.ShardCells(cells, s.profiles, cfg.Shard)
	}
	room := testbed.MachineRoom
	if cfg.Room != nil {
		room = cfg.Room
	}
	planned := len(cells)
	cells, skipped := runner.FitRoom(cells, s.profiles, room(), s.pairing)
	log := cfg.logger()
	impossible := cfg.Matrix.Impossible()
	for _, sk := range skipped {
		log.Warn("cell skipped: too large for this machine", "why", sk)
	}
	if planned > 0 && len(cells) == 0 {
		return nil, &ConfigError{fmt.Errorf("run: every cell is too large for this machine:\n  %s", strings.Join(skipped, "\n  "))}
	}
	trials := runner.Plan(cells, cfg.Count, 1)
	// With baselines, every job's process runs an untimed job first
	// (runner.PassConfig.Warmup), so that a cell and its baselines meet the same
	// process state (README "Baselines"); not under callgrind, whose counts it
	// would not change.
	warm := cfg.RawCopy && s.instructions == nil
	if cfg.DryRun {
		if err := runner.WritePlan(cfg.Stdout, s.profiles, cfg.Matrix.Profiles, cells, trials, cfg.Shard, s.pairing, warm); err != nil {
			return nil, err
		}
		if cfg.RawCopy {
			writeBaselinePlan(cfg.Stdout, s.profiles, cells, cfg.Count, warm)
		}
		if len(impossible)+len(skipped) > 0 {
			fmt.Fprintln(cfg.Stdout)
		}
		for _, sk := range impossible {
			fmt.Fprintf(cfg.Stdout, "skipped, more actors than vnodes: %s\n", sk)
		}
		for _, sk := range skipped {
			fmt.Fprintf(cfg.Stdout, "skipped, too large for this machine: %s\n", sk)
		}
		return nil, nil
	}
	if len(cells) == 0 {
		log.Info("this shard has no cells", "shard", fmt.Sprintf("%d/%d", cfg.Shard.Index, cfg.Shard.Count))
		return &RunReport{}, nil
	}

	checkout, dir, err := checkoutDir(ctx, cfg.Src, cfg.Out, "runs", cfg.Force, cfg.CommandLine)
	if err != nil {
		return nil, err
	}
	side := runner.Side{Checkout: checkout, File: "results.txt"}
	var remove func()
	if side.Binary, remove, err = benchBinary(ctx, log, checkout, dir, cfg.Binary, s.buildEnv()); err != nil {
		return nil, err
	}
	defer remove()
	pc := s.passConfig(dir, "", cfg.Output)
	xc := s.passConfig(dir, "extras", cfg.Output)
	pc.Warmup, xc.Warmup = warm, warm
	var replays []*benchfmt.Result // each cell's replay, run right after the cell
	var failedReplays []string
	if cfg.RawCopy {
		// A cell's replay runs right after each of its jobs, so that the two meet
		// the same load and backfill ÷ replay is not biased by the machine's drift.
		pc.AfterTrial = func(ctx context.Context, t runner.Trial) {
			if ctx.Err() != nil {
				return
			}
			res, failed := runner.RunExtrasOfRound(ctx, xc, side, []runner.Extra{runner.Baseline{Cell: t.Cell, Benchmark: contract.ReplayBenchmark}}, t.Round)
			replays, failedReplays = append(replays, res...), append(failedReplays, failed...)
		}
	}
	pass, err := runner.RunPass(ctx, pc, []runner.Side{side}, trials)
	rep := &RunReport{Dir: dir, Results: pass.Results[0], Rounds: pass.Rounds[0], Units: pass.Units, Pass: pass}
	if err != nil {
		return rep, err
	}
	var extras []runner.Extra
	if cfg.RawCopy {
		extras = runner.TableBaselinesOf(cells)
	}
	if cfg.Shard.Count <= 1 || cfg.Shard.Index == 1 {
		for _, r := range cfg.Recoveries {
			extras = append(extras, r)
		}
	}
	var extrasErr error // runs after the cells that failed
	rep.Extras = replays
	if (len(extras) > 0 && ctx.Err() == nil) || len(replays)+len(failedReplays) > 0 {
		failed := failedReplays
		if len(extras) > 0 && ctx.Err() == nil {
			more, moreFailed := runner.RunExtras(ctx, xc, side, extras, cfg.Count)
			rep.Extras, failed = append(rep.Extras, more...), append(failed, moreFailed...)
		}
		for _, f := range failed {
			log.Warn("a run after the cells failed", "run", strings.SplitN(f, "\n", 2)[0])
		}
		if len(failed) > 0 {
			planned := len(extras) * cfg.Count
			if cfg.RawCopy {
				planned += len(trials)
			}
			extrasErr = appendFailures(dir, failed, planned)
		}
		if len(rep.Extras) > 0 {
			// They go into results.txt after the cells; the summary and the plots
			// of cells skip them.
			if err := writeResults(filepath.Join(dir, "results.txt"), append(slices.Clip(rep.Results), rep.Extras...), rep.Units); err != nil {
				return rep, err
			}
		}
	}
	if len(rep.Results) > 0 {
		if err := summarize(cfg, rep); err != nil {
			return rep, err
		}
	}
	return rep, errors.Join(pass.Err(ctx, dir), extrasErr)
}

// appendFailures adds the failed runs after the cells to the run's failures.txt,
// beside the cells' own, and says how many of planned failed.
func appendFailures(dir string, failed []string, planned int) error {
	name := filepath.Join(dir, "failures.txt")
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("recording failed runs: %w", err)
	}
	for _, l := range failed {
		if _, err := f.WriteString(strings.TrimRight(l, "\n") + "\n"); err != nil {
			f.Close()
			return fmt.Errorf("recording failed runs in %s: %w", name, err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("recording failed runs in %s: %w", name, err)
	}
	return fmt.Errorf("%d of %d runs after the cells (raw copies, baselines, recoveries) failed (see %s)", len(failed), planned, name)
}

// checkoutDir inspects the checkout at src and makes the output directory: out,
// or results/<kind>/<UTC time>-<commit> in the checkout.
func checkoutDir(ctx context.Context, src, out, kind string, force bool, commandLine []string) (testbed.Checkout, string, error) {
	checkout, err := testbed.InspectCheckout(ctx, src)
	if err != nil {
		return checkout, "", err
	}
	if out == "" {
		out = filepath.Join(checkout.Dir, "results", kind, time.Now().UTC().Format("20060102T150405Z")+"-"+checkout.Short())
	}
	dir, err := newResultsDir(out, force, commandLine)
	return checkout, dir, err
}

// benchBinary is the bench binary to run: binary if given, else one built from
// the checkout into dir, which remove deletes.
func benchBinary(ctx context.Context, log *slog.Logger, checkout testbed.Checkout, dir, binary string, env []string) (path string, remove func(), err error) {
	if binary != "" {
		return binary, func() {}, nil
	}
	path = filepath.Join(dir, "bench.test")
	log.Info("building the bench binary", "src", checkout.Dir, "commit", checkout.Short())
	if err := runner.BuildBench(ctx, checkout.Dir, path, env...); err != nil {
		return "", nil, err
	}
	return path, func() { os.Remove(path) }, nil
}

// newResultsDir makes an output directory, absolute (bench binaries run in it and
// get paths in it), with its traces folder and command.txt. A directory that
// exists must be empty, so no output mixes two runs; with force, one that an
// earlier benchrun made (it holds command.txt) is emptied first.
func newResultsDir(dir string, force bool, commandLine []string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		_, ours := os.Stat(filepath.Join(dir, "command.txt"))
		switch {
		case !force:
			return "", &ConfigError{fmt.Errorf("--out %s already holds files: name a new directory, or pass --force to replace an earlier run's output", dir)}
		case ours != nil:
			return "", &ConfigError{fmt.Errorf("--out %s holds files but no command.txt: it is not an earlier benchrun output, and --force does not empty it", dir)}
		}
		if err := os.RemoveAll(dir); err != nil {
			return "", fmt.Errorf("--force: %w", err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "traces"), 0o755); err != nil {
		return "", fmt.Errorf("results directory: %w", err)
	}
	return dir, files.WriteAtomic(filepath.Join(dir, "command.txt"), []byte(runner.QuoteArgs(commandLine)+"\n"))
}

// summarize prints the run's summary, keeps it as summary.txt, and draws the plots.
func summarize(cfg RunConfig, rep *RunReport) error {
	g, err := render.SummaryGrid(rep.Results, rep.Rounds, rep.Units)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := render.WriteSummary(&buf, g); err != nil {
		return err
	}
	for _, n := range stats.ShortCells(rep.Results) {
		fmt.Fprintf(&buf, "\n%s", n)
	}
	var baselines bytes.Buffer
	if wrote, err := render.WriteBaselines(&baselines, append(slices.Clip(rep.Results), rep.Extras...)); err != nil {
		return err
	} else if wrote {
		fmt.Fprintf(&buf, "\n\n%s", bytes.TrimSuffix(baselines.Bytes(), []byte("\n")))
	}
	fmt.Fprintf(&buf, "\nresults: %s\n  go tool benchstat -col /persist %s\n", rep.Dir, filepath.Join(rep.Dir, "results.txt"))
	if err := files.WriteAtomic(filepath.Join(rep.Dir, "summary.txt"), buf.Bytes()); err != nil {
		return err
	}
	if _, err := cfg.Stdout.Write(buf.Bytes()); err != nil {
		return err
	}
	if !cfg.NoPlots {
		traces, err := readTraces(rep.Pass.Traces[0])
		if err != nil {
			cfg.logger().Warn("traces", "err", err)
		}
		drawPlots(cfg.Stdout, cfg.logger(), rep.Dir, runPlotSet(g, traces))
	}
	return nil
}

// runPlotSet is the plot set of a run: persist off and on as the variants.
func runPlotSet(g *judge.Grid, traces []jobtrace.Trace) render.PlotSet {
	pair := contract.PairedDimension()
	ps := render.PlotSet{Grid: g, Title: pair.Name + " " + strings.Join(pair.Values, " vs ")}
	if len(g.Tables) > 0 {
		for _, c := range g.Tables[0].Cols {
			ps.ColNames = append(ps.ColNames, contract.Field{Dim: pair.Name, Value: c.StringValues()}.String())
		}
	}
	ps.Traces = make([][]jobtrace.Trace, len(ps.ColNames))
	for _, t := range traces {
		c, err := contract.ParseName(t.Cell)
		if err != nil {
			continue
		}
		for i, n := range ps.ColNames {
			if n == c.Field(pair.Name).String() {
				ps.Traces[i] = append(ps.Traces[i], t)
			}
		}
	}
	return ps
}

// readTraces reads the trace files the bench binaries wrote.
func readTraces(paths []string) ([]jobtrace.Trace, error) {
	var out []jobtrace.Trace
	for _, p := range paths {
		if p == "" {
			continue
		}
		ts, err := jobtrace.ReadTraceFile(p)
		if err != nil {
			return out, err
		}
		out = append(out, ts...)
	}
	return out, nil
}

// drawPlots draws the plots and says where they are; a plot that cannot be drawn
// is a warning, not a failure.
func drawPlots(w io.Writer, log *slog.Logger, dir string, ps render.PlotSet) []string {
	made, skipped, err := render.Plots(dir, ps)
	if err != nil {
		log.Warn("no plots", "err", err)
		return nil
	}
	for _, s := range skipped {
		log.Warn("plot skipped", "why", s)
	}
	if len(made) > 0 {
		fmt.Fprintf(w, "plots: %s/{%s}.{png,svg}\n", filepath.Join(dir, "plots"), strings.Join(made, ","))
	}
	return made
}

// writeBaselinePlan says which baselines run after the cells.
func writeBaselinePlan(w io.Writer, set *profile.Set, cells []contract.Cell, count int, warm bool) {
	n := map[string]int{}
	for _, e := range runner.BaselinesOf(cells) {
		base, _ := benchfmt.Name(e.Name()).Parts()
		n[string(base)]++
	}
	est := time.Duration(runner.EstimateBaselines(cells, set, count, warm) * float64(time.Second)).Round(time.Second)
	fmt.Fprintf(w, "\nbaselines, about %v more: %d replays (BenchmarkReplay, one per cell, each recording its cell's backfill untimed first and replaying again at its pace after), each right after its cell's job in every round; then %d rounds of %d append-order copies (BenchmarkRawCopy, one per table) and %d scan-only reads (BenchmarkScanOnly, one per scan)\n",
		est, n[contract.ReplayBenchmark], count, n[contract.RawCopyBenchmark], n[contract.ScanOnlyBenchmark])
}
