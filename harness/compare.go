package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/cellsdiff"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/render"
	"github.com/backfill-bench/backfill-bench/harness/runner"
	"github.com/backfill-bench/backfill-bench/harness/stats"
	"github.com/backfill-bench/backfill-bench/harness/testbed"
	"github.com/backfill-bench/backfill-bench/internal/files"
)

// ErrRegression is returned by Compare and Nightly when the verdict is a regression.
var ErrRegression = errors.New("regression")

// ErrInconclusive is returned by Compare when no regression was found but some
// judged pairs could not be shown to be within their thresholds either.
var ErrInconclusive = errors.New("inconclusive: some changes could be beyond their thresholds; run more rounds (--count) to settle them")

// CompareConfig configures `benchrun compare`.
type CompareConfig struct {
	Measure              // what to run when the sides are refs; unused for files
	Output               // where to talk
	judge.Options        // thresholds, correction, alpha
	Base, Head    string // a git ref, a results file or a results directory; Head "": the working tree
	Confirm       int    // batches of Count runs re-run for suspected regressions (default 1; 0: none)
	// Budget bounds the compare's wall time, builds included: rounds are added to
	// inconclusive cells only while they fit in it (0: no rounds are added).
	Budget      time.Duration
	Out         string // default <module>/compare/<base>..<head>, or ./compare/… for files
	Force       bool   // replace Out if it holds an earlier compare's output
	CommandLine []string
	NoPlots     bool
	// CellsFromDiff, a file of rules from changed paths to extra cells (see
	// ci/cells-by-path.json), adds to the matrix the cells the change may touch.
	CellsFromDiff string
	// ExpectedRegression, when not empty, is why a regression is expected (the PR's
	// expected-regression label): a confirmed regression then passes, with the
	// reason recorded in verdict.json and report.md.
	ExpectedRegression string
}

// sideSpec is what a user named as one side.
type sideSpec struct {
	arg  string
	file string // a results file, or "" for a ref
	ref  string // a git ref; "" with file "" is the working tree
}

// parseSide tells a results file or directory from a ref. An argument that names
// neither an existing path nor (later) a commit is reported as both.
func parseSide(arg string) sideSpec {
	if arg == "" {
		return sideSpec{}
	}
	if st, err := os.Stat(arg); err == nil {
		if st.IsDir() {
			return sideSpec{arg: arg, file: filepath.Join(arg, "results.txt")}
		}
		return sideSpec{arg: arg, file: arg}
	}
	return sideSpec{arg: arg, ref: arg}
}

func (s sideSpec) label() string {
	if s.arg == "" {
		return "working-tree"
	}
	return s.arg
}

// compareSetup is a CompareConfig checked once.
type compareSetup struct {
	base, head sideSpec
	measure    *measureSetup // nil for files
}

func (cfg *CompareConfig) setup() (*compareSetup, error) {
	bad := func(err error) (*compareSetup, error) { return nil, &ConfigError{err} }
	if cfg.Base == "" {
		return bad(errors.New("compare: name the base: a git ref, a results file or a results directory"))
	}
	s := &compareSetup{base: parseSide(cfg.Base), head: parseSide(cfg.Head)}
	for _, side := range []sideSpec{s.base, s.head} {
		// What reads as a path is one: refs end in no .txt and start with no / or ./.
		if ref := side.ref; strings.HasSuffix(ref, ".txt") || strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, "./") || strings.HasPrefix(ref, "../") {
			return bad(fmt.Errorf("compare: %s: no such results file or directory", ref))
		}
	}
	if (s.base.file == "") != (s.head.file == "") {
		return bad(fmt.Errorf("compare %s with %s: compare two refs (or a ref with the working tree) or two results files, not one of each", s.base.label(), s.head.label()))
	}
	if cfg.Confirm < 0 {
		return bad(fmt.Errorf("--confirm %d: must be ≥ 0", cfg.Confirm))
	}
	if cfg.Budget < 0 {
		return bad(fmt.Errorf("--budget %v: must be ≥ 0 (0: no rounds are added)", cfg.Budget))
	}
	if err := cfg.Options.Validate(); err != nil {
		return bad(err)
	}
	if cfg.CellsFromDiff != "" && s.base.file != "" {
		return bad(fmt.Errorf("--cells-from-diff %s: the sides are results files, not commits: there is no diff", cfg.CellsFromDiff))
	}
	if s.base.file == "" {
		m, err := cfg.Measure.setup(cfg.logger())
		if err != nil {
			return nil, err
		}
		s.measure = m
	} else if cfg.Count < 1 {
		return bad(fmt.Errorf("--count %d: must be ≥ 1", cfg.Count))
	}
	return s, nil
}

// sides are both sides' results, in memory.
type sides struct {
	base, head judge.Side
	units      benchfmt.UnitMetadataMap
}

// Compare measures or reads both sides, judges them and writes the comparison
// directory: base.txt and head.txt, verdict.json, report.md, metrics.txt and the
// plots. The error is ErrRegression when a regression stands, ErrInconclusive when
// none does but not every judged pair was settled.
func Compare(ctx context.Context, cfg CompareConfig) (*judge.Verdict, error) {
	start := time.Now()
	s, err := cfg.setup()
	if err != nil {
		return nil, err
	}
	var (
		measured sides
		traces   [2][]string
		notes    []string
		confirm  func(cells []contract.Cell, rounds int) (sides, error)
		why      func(v *judge.Verdict) // profiles the confirmed regressions
		extend   extendFunc
		perCell  time.Duration
		dir      string
		failed   []string // benchmarks whose job failed on the head
	)
	if s.measure == nil {
		// Files: no checkout needed; the output goes beside the current directory.
		if dir, err = compareDir(cfg, ".", s); err != nil {
			return nil, err
		}
		var warnings []string
		if measured, warnings, err = readSides(s.base.file, s.head.file); err != nil {
			return nil, err
		}
		for _, w := range warnings {
			cfg.logger().Warn("skipped", "what", w)
		}
		notes = append(notes, warnings...)
		if failed, err = failedIn(s.head); err != nil {
			return nil, err
		}
		for name, side := range map[string]judge.Side{"base.txt": measured.base, "head.txt": measured.head} {
			if err := writeResults(filepath.Join(dir, name), side.Results, measured.units); err != nil {
				return nil, err
			}
		}
		if cfg.Confirm > 0 {
			notes = append(notes, "results files cannot be re-run: regressions are not confirmed")
		}
	} else {
		checkout, err := testbed.InspectCheckout(ctx, cfg.Src)
		if err != nil {
			return nil, err
		}
		if dir, err = compareDir(cfg, checkout.Dir, s); err != nil {
			return nil, err
		}
		if cfg.CellsFromDiff != "" {
			changed, err := testbed.ChangedPaths(ctx, checkout.Dir, s.base.ref, s.head.ref)
			if err != nil {
				return nil, fmt.Errorf("--cells-from-diff: %w", err)
			}
			more, err := cellsdiff.Add(&cfg.Matrix, cfg.CellsFromDiff, changed)
			if err != nil {
				return nil, &ConfigError{err}
			}
			notes = append(notes, more...)
		}
		b, err := newBuilds(ctx, cfg, checkout, dir, s.base, s.head)
		if b != nil {
			defer b.close()
		}
		if err != nil {
			return nil, err
		}
		// run runs a pass of rounds first … first+count−1 into the results files
		// <side><file>.txt, after prior, the results they already hold; the pass's
		// name keeps its traces and failures apart.
		run := func(name, file string, cells []contract.Cell, first, count int, prior sides) (sides, *runner.PassResult, error) {
			pc := s.measure.passConfig(dir, name, cfg.Output)
			for i := range b.sides {
				b.sides[i].File = b.sides[i].Label + file + ".txt"
				b.sides[i].Prior = []judge.Side{prior.base, prior.head}[i].Results
			}
			pass, err := runner.RunPass(ctx, pc, b.sides, runner.PlanRounds(cells, first, count, 2))
			if err == nil {
				err = pass.Err(ctx, dir)
			}
			out := sides{units: pass.Units}
			out.base = judge.Side{Results: append(prior.base.Results, pass.Results[0]...), Rounds: append(prior.base.Rounds, pass.Rounds[0]...)}
			out.head = judge.Side{Results: append(prior.head.Results, pass.Results[1]...), Rounds: append(prior.head.Rounds, pass.Rounds[1]...)}
			for k, u := range prior.units {
				out.units[k] = u
			}
			return out, pass, err
		}
		passStart := time.Now()
		cells := cfg.Matrix.Cells()
		var pass *runner.PassResult
		if measured, pass, err = run("", "", cells, 1, cfg.Count, sides{}); err != nil {
			return nil, err
		}
		perCell = time.Since(passStart) / time.Duration(len(cells)*cfg.Count)
		traces = [2][]string{pass.Traces[0], pass.Traces[1]}
		extend = func(cells []contract.Cell, first, count int) (sides, error) {
			more, pass, err := run(fmt.Sprintf("rounds-%d-%d", first, first+count-1), "", cells, first, count, measured)
			if pass != nil {
				traces[0], traces[1] = append(traces[0], pass.Traces[0]...), append(traces[1], pass.Traces[1]...)
			}
			return more, err
		}
		confirm = func(cells []contract.Cell, rounds int) (sides, error) {
			again, _, err := run("confirm", "-confirm", cells, 1, rounds, sides{})
			return again, err
		}
		why = func(v *judge.Verdict) {
			if s.measure.instructions != nil {
				explainCounts(v, traces) // the measured jobs' own dumps
				return
			}
			var ps [2]profiledSide
			for i := range ps {
				ps[i] = profiledSide{Label: b.sides[i].Label, Binary: b.sides[i].Binary}
			}
			explain(ctx, dir, ps, s.measure.profileFiles, s.measure.Timeout, v)
		}
	}

	countNote, err := checkCounts(measured.base.Results, measured.head.Results)
	if err != nil {
		return nil, &ConfigError{err}
	}
	if countNote != "" {
		notes = append(notes, countNote)
	}
	v, g, measured, more, err := settle(ctx, cfg, measured, cfg.Matrix.Cells(), perCell, start.Add(cfg.Budget), extend)
	if err != nil {
		return nil, err
	}
	notes = append(notes, more...)
	notes = append(notes, shortCells(append(slices.Clip(measured.base.Results), measured.head.Results...))...)
	v.Base, v.Head = s.base.label(), s.head.label()
	v.Notes = append(v.Notes, notes...)
	v.MarkFailed(failed)
	if v.Regression && confirm != nil && cfg.Confirm > 0 {
		if err := confirmRegressions(v, cfg, judge.Options{Thresholds: cfg.Thresholds, Correction: cfg.Correction, Alpha: v.Alpha}, confirm); err != nil {
			return v, err
		}
	}
	if v.Regression && why != nil {
		why(v)
		addByteChanges(v)
	}
	if v.Regression && len(v.FailedInHead) == 0 && cfg.ExpectedRegression != "" {
		v.ExpectedRegression = cfg.ExpectedRegression
	}
	if err := writeComparison(cfg, dir, v, g, traces); err != nil {
		return v, err
	}
	if v.Judged() == 0 {
		return v, nothingJudged(v, cfg.Thresholds)
	}
	switch v.Outcome() {
	case judge.Regression:
		if v.ExpectedRegression != "" {
			return v, nil
		}
		return v, ErrRegression
	case judge.Inconclusive:
		if len(v.Lost) > 0 {
			return v, lostError(v.Lost)
		}
		return v, ErrInconclusive
	}
	return v, nil
}

// compareDir makes the comparison directory, cfg.Out or compare/<base>..<head>
// under root, with its command.txt.
func compareDir(cfg CompareConfig, root string, s *compareSetup) (string, error) {
	out := cfg.Out
	if out == "" {
		out = filepath.Join(root, "compare", files.SafeName(s.base.label())+".."+files.SafeName(s.head.label()))
	}
	return newResultsDir(out, cfg.Force, cfg.CommandLine)
}

// readSides reads the two results files the user named, as benchstat would: the
// warnings name what was skipped.
func readSides(base, head string) (sides, []string, error) {
	var s sides
	b, err := contract.ReadLenient(base)
	if err != nil {
		return s, nil, fmt.Errorf("compare: %w", err)
	}
	h, err := contract.ReadLenient(head)
	if err != nil {
		return s, nil, fmt.Errorf("compare: %w", err)
	}
	s.base.Results, s.head.Results, s.units = b.Results, h.Results, b.Units
	for k, u := range h.Units {
		s.units[k] = u
	}
	return s, append(b.Warnings, h.Warnings...), nil
}

// failedIn names the benchmarks whose job failed in a results file ("--- FAIL:
// BenchmarkX" of go test) or, for a results directory, in its failures.txt.
func failedIn(side sideSpec) ([]string, error) {
	var failed []string
	data, err := os.ReadFile(side.file)
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(l), "--- FAIL: "); ok && strings.HasPrefix(name, "Benchmark") {
			name, _, _ = strings.Cut(name, " ")
			failed = append(failed, strings.TrimPrefix(name, "Benchmark"))
		}
	}
	if side.file == side.arg { // a file, not a directory
		return failed, nil
	}
	data, err = os.ReadFile(filepath.Join(side.arg, "failures.txt"))
	if errors.Is(err, os.ErrNotExist) {
		return failed, nil
	}
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		// run 3 (round 2, head) BenchmarkX/…: reason, or after the cells (round 1) …
		if _, rest, ok := strings.Cut(l, ") Benchmark"); ok && (strings.HasPrefix(l, "run ") || strings.HasPrefix(l, "after the cells ")) {
			name, _, _ := strings.Cut(rest, ": ")
			failed = append(failed, name)
		}
	}
	return failed, nil
}

// lostError is the inconclusive verdict of judged cells on one side only.
func lostError(lost []judge.Lost) error {
	var names []string
	for _, l := range lost {
		names = append(names, l.String())
	}
	return fmt.Errorf("%w: judged cells on one side only, which no verdict can pass: %s (a job that crashed or was renamed, or a changed -N GOMAXPROCS suffix)", errInconclusiveLost, strings.Join(names, "; "))
}

// errInconclusiveLost is ErrInconclusive without its advice to run more rounds,
// which cannot bring a lost cell back.
var errInconclusiveLost = inconclusive("inconclusive")

type inconclusive string

func (e inconclusive) Error() string        { return string(e) }
func (e inconclusive) Is(target error) bool { return target == ErrInconclusive }

// nothingJudged is the error of a verdict over no judged pair: it names the units
// the results have and the --threshold that would judge them.
func nothingJudged(v *judge.Verdict, t judge.Thresholds) error {
	var units, flag []string
	for _, u := range v.Units {
		units = append(units, u)
		if t[u] == 0 && contract.Better(nil, u) != 0 {
			flag = append(flag, u+"=3%")
		}
	}
	msg := fmt.Sprintf("compare: no (cell, metric) pair was judged: the results have units %s, none with a threshold", strings.Join(units, ", "))
	if len(flag) > 0 {
		msg += fmt.Sprintf("; judge them with --threshold %s (percentages to taste)", strings.Join(flag, ","))
	}
	return errors.New(msg)
}

func writeResults(name string, results []*benchfmt.Result, units benchfmt.UnitMetadataMap) error {
	data, err := contract.Encode(results, units)
	if err != nil {
		return err
	}
	return files.WriteAtomic(name, data)
}

// confirmRegressions re-runs the cells of suspected regressions in a pass of their
// own and keeps a regression only if the fresh samples, judged on their own, show
// it again.
func confirmRegressions(v *judge.Verdict, cfg CompareConfig, opts judge.Options, rerun func([]contract.Cell, int) (sides, error)) error {
	byLabel := map[string]contract.Cell{}
	for _, c := range cfg.Matrix.Cells() {
		byLabel[c.Name()] = c
	}
	var cells []contract.Cell
	for _, name := range v.RegressedCells() {
		if c, ok := byLabel[name]; ok {
			cells = append(cells, c)
		}
	}
	judged := 0 // the pairs the confirmation will judge: those of the cells re-run
	for _, f := range v.Findings {
		if f.Status != judge.NotJudged && slices.Contains(v.RegressedCells(), f.Cell) {
			judged++
		}
	}
	rounds := confirmRounds(cfg, opts.Alpha, judged)
	again, err := rerun(cells, rounds)
	if err != nil {
		return err
	}
	av, _, err := judge.Compare(again.base, again.head, again.units, opts)
	if err != nil {
		return err
	}
	judge.Confirm(v, av)
	v.Notes = append(v.Notes, fmt.Sprintf("suspected regressions were re-run %d× on both sides (base-confirm.txt, head-confirm.txt) and kept only if seen again", rounds))
	return nil
}

// confirmRounds is how many rounds the confirmation runs: --confirm batches of
// --count, but at least enough for the paired test to reach alpha ÷ the judged
// pairs, the strictest step of Holm's or BH's correction (with 6 rounds its
// smallest p, 0.031, could never pass the adaptive compare's α = 0.0221, so no
// regression was ever confirmed).
func confirmRounds(cfg CompareConfig, alpha float64, judged int) int {
	return max(cfg.Count*cfg.Confirm, stats.MinPairedRounds(alpha/float64(max(judged, 1))))
}

// writeComparison writes the table of every metric, verdict.json, the plots and
// report.md, and prints the verdict's table.
func writeComparison(cfg CompareConfig, dir string, v *judge.Verdict, g *judge.Grid, traces [2][]string) error {
	var metrics bytes.Buffer
	reproduce := fmt.Sprintf("go tool benchstat -ignore %s %s %s", contract.CompareIgnore, filepath.Join(dir, "base.txt"), filepath.Join(dir, "head.txt"))
	if err := render.WriteMetrics(&metrics, g, reproduce); err != nil {
		return err
	}
	var verdict bytes.Buffer
	if err := render.WriteVerdictJSON(&verdict, v); err != nil {
		return err
	}
	for name, data := range map[string][]byte{"metrics.txt": metrics.Bytes(), "verdict.json": verdict.Bytes()} {
		if err := files.WriteAtomic(filepath.Join(dir, name), data); err != nil {
			return err
		}
	}
	var plots []string
	var plotLines bytes.Buffer
	if !cfg.NoPlots {
		ps := render.PlotSet{Grid: g, ColNames: []string{judge.SideBase, judge.SideHead}, Title: "base vs head", Verdict: v}
		for _, side := range traces {
			ts, err := readTraces(side)
			if err != nil {
				cfg.logger().Warn("traces", "err", err)
			}
			ps.Traces = append(ps.Traces, ts)
		}
		plots = drawPlots(&plotLines, cfg.logger(), dir, ps)
	}
	var report bytes.Buffer
	render.WriteReport(&report, v, runner.QuoteArgs(cfg.CommandLine), testbed.InspectMachine().Describe(), plots)
	if err := files.WriteAtomic(filepath.Join(dir, "report.md"), report.Bytes()); err != nil {
		return err
	}
	var printed bytes.Buffer
	render.WriteVerdictTable(&printed, v)
	fmt.Fprintf(&printed, "\ncomparison: %s\n%s", dir, plotLines.String())
	_, err := cfg.Stdout.Write(printed.Bytes())
	return err
}

// builds are both sides' bench binaries, built in worktrees for refs.
type builds struct {
	sides     []runner.Side
	worktrees []func()
}

func newBuilds(ctx context.Context, cfg CompareConfig, checkout testbed.Checkout, dir string, specs ...sideSpec) (*builds, error) {
	b := &builds{}
	for i, spec := range specs {
		label := []string{judge.SideBase, judge.SideHead}[i]
		s := runner.Side{Label: label, Checkout: checkout, Binary: filepath.Join(dir, label+".test")}
		if spec.ref != "" {
			wt, remove, err := testbed.AddWorktree(ctx, checkout.Dir, spec.ref)
			if err != nil {
				return b, err
			}
			b.worktrees = append(b.worktrees, remove)
			if s.Checkout, err = testbed.InspectCheckout(ctx, wt); err != nil {
				return b, err
			}
		}
		cfg.logger().Info("building the bench binary", "side", label, "ref", spec.label(), "commit", s.Checkout.Short())
		if err := runner.BuildBench(ctx, s.Checkout.Dir, s.Binary); err != nil {
			return b, &testbed.BuildError{Side: spec.label(), Err: err}
		}
		b.sides = append(b.sides, s)
	}
	return b, nil
}

func (b *builds) close() {
	for _, s := range b.sides {
		os.Remove(s.Binary)
	}
	for _, remove := range b.worktrees {
		remove()
	}
}

// Log is the logger of o: its Logger, or one that discards.
func (o Output) Log() *slog.Logger { return o.logger() }
