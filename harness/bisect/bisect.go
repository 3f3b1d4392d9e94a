// Package bisect finds the commit between a good and a bad one that made cells
// regress (benchrun bisect), comparing each commit with the good one.
package bisect

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness"
	"github.com/backfill-bench/backfill-bench/harness/comment"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/testbed"
	"github.com/backfill-bench/backfill-bench/internal/files"
	"github.com/backfill-bench/backfill-bench/internal/usage"
)

// Config configures `benchrun bisect`: which commit between a good and a
// bad one made the given cells regress. Each commit tested is compared with the
// good one as `benchrun compare GOOD COMMIT` does (paired rounds, the same
// thresholds, correction and confirmation), on the selected cells only.
type Config struct {
	Compare harness.CompareConfig // the comparison of each step; its Base, Head and Out are set per step
	Good    string                // a commit without the regression
	Bad     string                // a commit with it; "" with Step: HEAD of Src
	// Cell selects the cells: a cell's full name (as an alert names it), or a
	// regular expression over the names of the matrix's cells.
	Cell string
	// Step judges Bad (HEAD) against Good once, as `git bisect run` wants,
	// instead of searching.
	Step  bool
	Cache string // default <module>/results/runs/bisect-cache
}

// Outcomes of one bisect step, as `git bisect run` reads an exit status.
const (
	StepGood = "good"
	StepBad  = "bad"
	StepSkip = "skip" // the commit does not build, or its verdict is inconclusive
)

// Step is one commit judged against the good one.
type Step struct {
	Commit  testbed.Commit
	Outcome string
	Why     string // the verdict's outcome, or why the commit was skipped
	Dir     string // its comparison in the cache
	Cached  bool   // judged by an earlier run
}

// Result is what a bisect found: FirstBad, or, when commits that could not
// be judged hide it, the Candidates it is among; nothing when Bad does not regress.
type Result struct {
	Good       testbed.Commit
	Steps      []Step
	FirstBad   *testbed.Commit
	Candidates []testbed.Commit
}

// ErrInconclusive is returned when the first bad commit cannot be named:
// Bad's verdict is inconclusive, or commits that were skipped hide it.
var ErrInconclusive = errors.New("bisect: the first bad commit cannot be named")

// ErrStepSkip is returned by a Step whose commit does not build or whose verdict is
// inconclusive: `git bisect run` skips it (exit 125).
var ErrStepSkip = errors.New("skip: this commit cannot be judged")

// Bisect searches the commits after Good up to Bad for the first whose compare
// with Good regresses on the selected cells: Bad first (nothing to search if it
// does not regress), then halving. A commit that does not build or is
// inconclusive is skipped and its nearest neighbour tried. Each commit's
// comparison is kept in the cache, keyed by the good commit and the settings, so
// a second bisect over the same commits measures nothing again. With Step, only
// Bad is judged. The error is harness.ErrRegression when the first bad commit is named
// (or, with Step, Bad regresses), ErrInconclusive or ErrStepSkip when no
// commit can be named, nil when Bad does not regress.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	bad := func(err error) (*Result, error) { return nil, &usage.Error{Err: err} }
	if cfg.Good == "" || (cfg.Bad == "" && !cfg.Step) {
		return bad(errors.New("bisect: name the good and the bad commit: benchrun bisect GOOD BAD --cell PATTERN"))
	}
	if cfg.Cell == "" {
		return bad(errors.New("bisect: --cell is required: the cells to judge (a cell's name as the alert gives it, or a regular expression over the matrix's cell names)"))
	}
	m, err := selectCells(cfg.Compare.Matrix, cfg.Cell)
	if err != nil {
		return bad(err)
	}
	cfg.Compare.Matrix = m
	checkout, err := testbed.InspectCheckout(ctx, cfg.Compare.Src)
	if err != nil {
		return nil, err
	}
	repo := checkout.Dir
	if cfg.Bad == "" {
		cfg.Bad = "HEAD"
	}
	good, err := testbed.ResolveCommit(ctx, repo, cfg.Good)
	if err != nil {
		return bad(fmt.Errorf("bisect GOOD: %w", err))
	}
	badHash, err := testbed.ResolveCommit(ctx, repo, cfg.Bad)
	if err != nil {
		return bad(fmt.Errorf("bisect BAD: %w", err))
	}
	commits, err := testbed.CommitsBetween(ctx, repo, good, badHash)
	if err != nil {
		return bad(fmt.Errorf("bisect %s %s: %w", cfg.Good, cfg.Bad, err))
	}
	if len(commits) == 0 {
		return bad(fmt.Errorf("bisect %s %s: no commits between them", cfg.Good, cfg.Bad))
	}
	if cfg.Cache == "" {
		cfg.Cache = filepath.Join(repo, "results", "runs", "bisect-cache")
	}
	res := &Result{Good: testbed.Commit{Hash: good}}
	log := cfg.Compare.Log()
	judgeAt := func(i int) (string, error) {
		s, err := step(ctx, cfg, good, commits[i])
		if err != nil {
			return "", err
		}
		res.Steps = append(res.Steps, s)
		log.Info("bisect step", "commit", testbed.ShortHash(s.Commit.Hash), "outcome", s.Outcome, "why", s.Why, "cached", s.Cached)
		fmt.Fprintf(cfg.Compare.Stdout, "%s %s %s (%s)\n", testbed.ShortHash(s.Commit.Hash), s.Outcome, s.Commit.Subject, s.Why)
		return s.Outcome, nil
	}
	last := len(commits) - 1
	outcome, err := judgeAt(last)
	switch {
	case err != nil:
		return res, err
	case cfg.Step:
		return res, map[string]error{StepGood: nil, StepBad: harness.ErrRegression, StepSkip: ErrStepSkip}[outcome]
	case outcome == StepGood:
		return res, nil
	case outcome == StepSkip:
		res.Candidates = commits
		return res, ErrInconclusive
	}
	// Invariant: lo is good (−1: Good itself), hi is bad; skipped holds the
	// commits between them that could not be judged.
	lo, hi := -1, last
	skipped := map[int]bool{}
	for {
		mid, ok := nextProbe(lo, hi, skipped)
		if !ok {
			break
		}
		outcome, err := judgeAt(mid)
		if err != nil {
			return res, err
		}
		switch outcome {
		case StepBad:
			hi = mid
		case StepGood:
			lo = mid
		default:
			skipped[mid] = true
		}
	}
	if hi-lo == 1 {
		res.FirstBad = &commits[hi]
		return res, harness.ErrRegression
	}
	res.Candidates = commits[lo+1 : hi+1]
	return res, ErrInconclusive
}

// nextProbe is the commit strictly between lo and hi nearest their middle that
// has not been skipped; none when every one has.
func nextProbe(lo, hi int, skipped map[int]bool) (int, bool) {
	mid := lo + (hi-lo)/2
	for d := 0; d < hi-lo; d++ {
		for _, i := range []int{mid - d, mid + d} {
			if i > lo && i < hi && !skipped[i] {
				return i, true
			}
		}
	}
	return 0, false
}

// bisectStep compares commit with good, or reads that comparison from the cache.
func step(ctx context.Context, cfg Config, good string, commit testbed.Commit) (Step, error) {
	dir := filepath.Join(cfg.Cache, commit.Hash, testbed.ShortHash(good)+"-"+bisectKey(cfg))
	s := Step{Commit: commit, Dir: dir}
	if why, err := os.ReadFile(filepath.Join(dir, "skip.txt")); err == nil {
		s.Outcome, s.Why, s.Cached = StepSkip, strings.TrimSpace(string(why)), true
		return s, nil
	}
	if v, err := comment.ReadVerdict(filepath.Join(dir, "verdict.json")); err == nil {
		s.Outcome, s.Why = stepOutcome(v)
		s.Cached = true
		return s, nil
	}
	c := cfg.Compare
	c.Base, c.Head, c.Out, c.Force = good, commit.Hash, dir, true
	c.NoPlots = true
	c.CommandLine = append(slices.Clip(c.CommandLine), "# step: compare", testbed.ShortHash(good), testbed.ShortHash(commit.Hash))
	c.Stdout = io.Discard
	v, err := harness.Compare(ctx, c)
	var build *testbed.BuildError
	switch {
	case errors.As(err, &build) && build.Side == commit.Hash:
		s.Outcome, s.Why = StepSkip, "does not build: "+firstLine(build.Err.Error())
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return s, err
		}
		return s, files.WriteAtomic(filepath.Join(dir, "skip.txt"), []byte(s.Why+"\n"))
	case err != nil && !errors.Is(err, harness.ErrRegression) && !errors.Is(err, harness.ErrInconclusive):
		return s, fmt.Errorf("bisect: compare %s %s: %w", testbed.ShortHash(good), testbed.ShortHash(commit.Hash), err)
	}
	s.Outcome, s.Why = stepOutcome(v)
	return s, nil
}

// stepOutcome reads a verdict as a step: a regression is bad, no regression good,
// inconclusive a skip.
func stepOutcome(v *judge.Verdict) (outcome, why string) {
	switch v.Outcome() {
	case judge.Regression:
		return StepBad, fmt.Sprintf("%d regressed pairs", v.Regressions)
	case judge.Inconclusive:
		return StepSkip, fmt.Sprintf("inconclusive: %d pairs unsettled", v.Inconclusive)
	}
	return StepGood, "no regression"
}

// bisectKey names the settings a cached comparison was measured and judged with.
func bisectKey(cfg Config) string {
	c := cfg.Compare
	var b strings.Builder
	for _, cell := range c.Matrix.Cells() {
		b.WriteString(cell.Name() + "\n")
	}
	fmt.Fprintf(&b, "count=%d confirm=%d budget=%v pairing=%s profiles=%v timeout=%v\n", c.Count, c.Confirm, c.Budget, c.Pairing, c.ProfileFiles, c.Timeout)
	fmt.Fprintf(&b, "correction=%s alpha=%v across=%v thresholds=%v\n", c.Correction, c.Alpha, c.AcrossMachines, c.Thresholds)
	sum := sha256.Sum256([]byte(b.String()))
	return fmt.Sprintf("%x", sum[:4])
}

// selectCells is the matrix of the cells cell names: one cell's full name, or a
// regular expression over the names of m's cells whose matches make a matrix
// of their own (every combination of their values is among them).
func selectCells(m contract.Matrix, cell string) (contract.Matrix, error) {
	if c, err := contract.ParseName(cell); err == nil {
		return c.Only(), nil
	}
	re, err := regexp.Compile(cell)
	if err != nil {
		return m, fmt.Errorf("--cell %q: neither a cell's name nor a regular expression: %w", cell, err)
	}
	var picked []contract.Cell
	for _, c := range m.Cells() {
		if re.MatchString(c.Name()) {
			picked = append(picked, c)
		}
	}
	if len(picked) == 0 {
		return m, fmt.Errorf("--cell %q matches none of the matrix's %d cells (set the matrix with the dimension flags, or give a cell's full name)", cell, len(m.Cells()))
	}
	var sub contract.Matrix
	for _, d := range contract.DimensionNames() {
		var vals []string
		for _, c := range picked {
			if v := c.Only().Get(d); !slices.Contains(vals, v) {
				vals = append(vals, v)
			}
		}
		if err := sub.Set(d, strings.Join(vals, ",")); err != nil {
			return m, fmt.Errorf("--cell %q: %w", cell, err)
		}
	}
	if n := len(sub.Cells()); n != len(picked) {
		return m, fmt.Errorf("--cell %q matches %d cells, which do not make a matrix (their values combine into %d): narrow the pattern or bisect each cell", cell, len(picked), n)
	}
	return sub, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
