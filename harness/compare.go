package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/cellsdiff"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/render"
	"github.com/backfill-bench/backfill-bench/harness/runner"
	"github.com/backfill-bench/backfill-bench/harness/sides"
	"github.com/backfill-bench/backfill-bench/harness/testbed"
	"github.com/backfill-bench/backfill-bench/harness/why"
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

// compareSetup is a CompareConfig checked once.
type compareSetup struct {
	base, head sides.Spec
	measure    *measureSetup // nil for files
}

func (cfg *CompareConfig) setup() (*compareSetup, error) {
	bad := func(err error) (*compareSetup, error) { return nil, &ConfigError{err} }
	if cfg.Base == "" {
		return bad(errors.New("compare: name the base: a git ref, a results file or a results directory"))
	}
	s := &compareSetup{base: sides.Parse(cfg.Base), head: sides.Parse(cfg.Head)}
	for _, side := range []sides.Spec{s.base, s.head} {
		if err := side.Check(); err != nil {
			return bad(err)
		}
	}
	if (s.base.File == "") != (s.head.File == "") {
		return bad(fmt.Errorf("compare %s with %s: compare two refs (or a ref with the working tree) or two results files, not one of each", s.base.Label(), s.head.Label()))
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
	if cfg.CellsFromDiff != "" && s.base.File != "" {
		return bad(fmt.Errorf("--cells-from-diff %s: the sides are results files, not commits: there is no diff", cfg.CellsFromDiff))
	}
	if s.base.File == "" {
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

// measured is the first stage of a compare: both sides' first rounds, and what
// the judge and the explanations can ask of their source.
type measured struct {
	dir     string
	first   judge.Pair
	notes   []string      // the sides' own notes
	failed  []string      // benchmarks whose job failed on the head
	perCell time.Duration // one round of one cell on both sides
	rounds  judge.Rounds  // nil: results files, which cannot be re-run
	// explain profiles v's regressed cells (nil: nothing to profile with).
	explain func(v *judge.Verdict) []judge.Why
	traces  func() [2][]string
	close   func()
}

// Compare is a pipeline of values: the sides (refs built and run, or results
// files) give their first rounds; judge.Settle adds rounds to inconclusive cells,
// confirms regressions and returns the final verdict; the explanations of its
// regressions are their own values, attached to a copy; then the comparison
// directory is written: base.txt and head.txt, verdict.json, report.md,
// metrics.txt and the plots. The error is ErrRegression when a regression stands,
// ErrInconclusive when none does but not every judged pair was settled.
func Compare(ctx context.Context, cfg CompareConfig) (*judge.Verdict, error) {
	start := time.Now()
	s, err := cfg.setup()
	if err != nil {
		return nil, err
	}
	var m *measured
	if s.measure == nil {
		m, err = readFiles(cfg, s)
	} else {
		m, err = measureRefs(ctx, &cfg, s)
	}
	if m != nil && m.close != nil {
		defer m.close()
	}
	if err != nil {
		return nil, err
	}
	countNote, err := checkCounts(m.first.Base.Results, m.first.Head.Results)
	if err != nil {
		return nil, &ConfigError{err}
	}
	notes := m.notes
	if countNote != "" {
		notes = append(notes, countNote)
		// Every judged unit of counted jobs: under callgrind on one P their noise
		// is the scheduling's, with no common part a round could pair away (paired,
		// job-allocs/op's 5 rounds could not reach α: inconclusive every time).
		cfg.Options.Welch = append(cfg.Options.Welch, contract.UnitInstrPerRow, contract.UnitInstrPerBarrier, contract.UnitAllocs, contract.UnitWriteAmp)
	}
	var cells []string
	for _, c := range cfg.Matrix.Cells() {
		cells = append(cells, c.Name())
	}
	v, g, _, err := judge.Settle(ctx, m.first, judge.SettleConfig{
		Options: cfg.Options, Count: cfg.Count, Cells: cells,
		Budget: cfg.Budget, Deadline: start.Add(cfg.Budget), PerCell: m.perCell, Confirm: cfg.Confirm,
		Base: s.base.Label(), Head: s.head.Label(), Notes: notes, FailedInHead: m.failed,
		ExpectedRegression: cfg.ExpectedRegression, Log: cfg.logger(),
	}, m.rounds)
	if err != nil {
		return v, err
	}
	if v.Regression && m.explain != nil {
		explained := *v // the judge's verdict stays as it returned it
		explained.Why = why.Bytes(v, m.explain(v))
		v = &explained
	}
	if err := writeComparison(cfg, m.dir, v, g, m.traces()); err != nil {
		return v, err
	}
	return v, verdictError(v, cfg.Thresholds)
}

// verdictError is Compare's error for a written verdict.
func verdictError(v *judge.Verdict, t judge.Thresholds) error {
	if v.Judged() == 0 {
		return nothingJudged(v, t)
	}
	switch v.Outcome() {
	case judge.Regression:
		if v.ExpectedRegression != "" {
			return nil
		}
		return ErrRegression
	case judge.Inconclusive:
		if len(v.Lost) > 0 {
			return lostError(v.Lost)
		}
		return ErrInconclusive
	}
	return nil
}

// readFiles is the side of results files: no checkout is needed, the output goes
// beside the current directory, and nothing can be re-run.
func readFiles(cfg CompareConfig, s *compareSetup) (*measured, error) {
	dir, err := compareDir(cfg, ".", s)
	if err != nil {
		return nil, err
	}
	pair, warnings, err := sides.ReadFiles(s.base.File, s.head.File)
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		cfg.logger().Warn("skipped", "what", w)
	}
	m := &measured{dir: dir, first: pair, notes: warnings, traces: func() [2][]string { return [2][]string{} }}
	if m.failed, err = sides.Failed(s.head); err != nil {
		return nil, err
	}
	for name, side := range map[string]judge.Side{"base.txt": pair.Base, "head.txt": pair.Head} {
		if err := writeResults(filepath.Join(dir, name), side.Results, pair.Units); err != nil {
			return nil, err
		}
	}
	if cfg.Confirm > 0 {
		m.notes = append(m.notes, "results files cannot be re-run: regressions are not confirmed")
	}
	return m, nil
}

// measureRefs is the side of refs: both are built in worktrees and their first
// rounds run; cfg's matrix gains the cells of --cells-from-diff.
func measureRefs(ctx context.Context, cfg *CompareConfig, s *compareSetup) (*measured, error) {
	checkout, err := testbed.InspectCheckout(ctx, cfg.Src)
	if err != nil {
		return nil, err
	}
	dir, err := compareDir(*cfg, checkout.Dir, s)
	if err != nil {
		return nil, err
	}
	m := &measured{dir: dir}
	if cfg.CellsFromDiff != "" {
		changed, err := testbed.ChangedPaths(ctx, checkout.Dir, s.base.Ref, s.head.Ref)
		if err != nil {
			return nil, fmt.Errorf("--cells-from-diff: %w", err)
		}
		more, err := cellsdiff.Add(&cfg.Matrix, cfg.CellsFromDiff, changed)
		if err != nil {
			return nil, &ConfigError{err}
		}
		m.notes = append(m.notes, more...)
	}
	r, err := sides.Build(ctx, cfg.logger(), checkout, dir, func(name string) runner.PassConfig { return s.measure.passConfig(dir, name, cfg.Output) }, s.base, s.head)
	if r != nil {
		m.close = r.Close
	}
	if err != nil {
		return m, err
	}
	m.rounds, m.traces = r, r.Traces
	cells := cfg.Matrix.Cells()
	passStart := time.Now()
	if m.first, err = r.First(ctx, cells, cfg.Count); err != nil {
		return m, err
	}
	m.perCell = time.Since(passStart) / time.Duration(len(cells)*cfg.Count)
	m.explain = func(v *judge.Verdict) []judge.Why {
		if s.measure.instructions != nil {
			return why.Counts(v, r.Traces()) // the measured jobs' own dumps
		}
		var ps [2]why.Side
		for i, b := range r.Binaries() {
			ps[i] = why.Side{Label: b.Label, Binary: b.Binary}
		}
		return why.Profile(ctx, dir, ps, s.measure.profileFiles, s.measure.Timeout, v)
	}
	return m, nil
}

// compareDir makes the comparison directory, cfg.Out or compare/<base>..<head>
// under root, with its command.txt.
func compareDir(cfg CompareConfig, root string, s *compareSetup) (string, error) {
	out := cfg.Out
	if out == "" {
		out = filepath.Join(root, "compare", files.SafeName(s.base.Label())+".."+files.SafeName(s.head.Label()))
	}
	return newResultsDir(out, cfg.Force, cfg.CommandLine)
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

// Log is the logger of o: its Logger, or one that discards.
func (o Output) Log() *slog.Logger { return o.logger() }
