package sides

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/runner"
	"github.com/backfill-bench/backfill-bench/harness/testbed"
	"github.com/backfill-bench/backfill-bench/internal/callgrind"
)

// Refs are two refs built into bench binaries, whose rounds run into a
// comparison directory: the judge's Rounds.
type Refs struct {
	dir       string
	pass      func(name string) runner.PassConfig
	sides     []runner.Side
	worktrees []func()
	byName    map[string]contract.Cell // the cells of the first pass
	pair      judge.Pair               // every result of the passes so far
	traces    [2][]string              // of every pass but the confirmation
}

// Build builds the bench binaries of both sides into dir, refs in worktrees of
// checkout (a Spec without Ref is the checkout itself). pass gives the
// configuration of a pass by its name. Close removes what Build made, also after
// an error.
func Build(ctx context.Context, log *slog.Logger, checkout testbed.Checkout, dir string, pass func(name string) runner.PassConfig, specs ...Spec) (*Refs, error) {
	r := &Refs{dir: dir, pass: pass}
	var env []string // a counted pass's binaries are built as callgrind.BuildEnv says
	if pass("").Instructions != nil {
		env = callgrind.BuildEnv()
	}
	for i, spec := range specs {
		label := []string{judge.SideBase, judge.SideHead}[i]
		s := runner.Side{Label: label, Checkout: checkout, Binary: filepath.Join(dir, label+".test")}
		if spec.Ref != "" {
			wt, remove, err := testbed.AddWorktree(ctx, checkout.Dir, spec.Ref)
			if err != nil {
				return r, err
			}
			r.worktrees = append(r.worktrees, remove)
			if s.Checkout, err = testbed.InspectCheckout(ctx, wt); err != nil {
				return r, err
			}
		}
		log.Info("building the bench binary", "side", label, "ref", spec.Label(), "commit", s.Checkout.Short())
		if err := runner.BuildBench(ctx, s.Checkout.Dir, s.Binary, env...); err != nil {
			return r, &testbed.BuildError{Side: spec.Label(), Err: err}
		}
		r.sides = append(r.sides, s)
	}
	return r, nil
}

// Close removes the binaries and the worktrees.
func (r *Refs) Close() {
	for _, s := range r.sides {
		os.Remove(s.Binary)
	}
	for _, remove := range r.worktrees {
		remove()
	}
}

// Binaries are the sides' labels and bench binaries.
func (r *Refs) Binaries() []runner.Side { return r.sides }

// Traces are the trace files of every pass but the confirmation, per side.
func (r *Refs) Traces() [2][]string { return r.traces }

// First runs rounds 1 … count of cells into base.txt and head.txt; More and
// Again take the cells they are given by name from these.
func (r *Refs) First(ctx context.Context, cells []contract.Cell, count int) (judge.Pair, error) {
	r.byName = map[string]contract.Cell{}
	for _, c := range cells {
		r.byName[c.Name()] = c
	}
	first, pass, err := r.run(ctx, "", "", cells, 1, count, judge.Pair{})
	if err != nil {
		return first, err
	}
	r.traces = [2][]string{pass.Traces[0], pass.Traces[1]}
	r.pair = first
	return first, nil
}

// More runs rounds first … first+count−1 of cells into base.txt and head.txt,
// after the results so far, and returns every result so far.
func (r *Refs) More(ctx context.Context, cells []string, first, count int) (judge.Pair, error) {
	more, pass, err := r.run(ctx, fmt.Sprintf("rounds-%d-%d", first, first+count-1), "", r.cells(cells), first, count, r.pair)
	if pass != nil {
		r.traces[0], r.traces[1] = append(r.traces[0], pass.Traces[0]...), append(r.traces[1], pass.Traces[1]...)
	}
	r.pair = more
	return more, err
}

// Again runs rounds fresh rounds of cells into base-confirm.txt and
// head-confirm.txt.
func (r *Refs) Again(ctx context.Context, cells []string, rounds int) (judge.Pair, error) {
	again, _, err := r.run(ctx, "confirm", "-confirm", r.cells(cells), 1, rounds, judge.Pair{})
	return again, err
}

func (r *Refs) cells(names []string) []contract.Cell {
	var cells []contract.Cell
	for _, name := range names {
		if c, ok := r.byName[name]; ok {
			cells = append(cells, c)
		}
	}
	return cells
}

// run runs a pass of rounds first … first+count−1 into the results files
// <side><file>.txt, after prior, the results they already hold; the pass's name
// keeps its traces and failures apart.
func (r *Refs) run(ctx context.Context, name, file string, cells []contract.Cell, first, count int, prior judge.Pair) (judge.Pair, *runner.PassResult, error) {
	for i := range r.sides {
		r.sides[i].File = r.sides[i].Label + file + ".txt"
		r.sides[i].Prior = []judge.Side{prior.Base, prior.Head}[i].Results
	}
	pass, err := runner.RunPass(ctx, r.pass(name), r.sides, runner.PlanRounds(cells, first, count, 2))
	if pass == nil {
		return prior, nil, err
	}
	if err == nil {
		err = pass.Err(ctx, r.dir)
	}
	out := judge.Pair{Units: pass.Units}
	out.Base = judge.Side{Results: append(prior.Base.Results, pass.Results[0]...), Rounds: append(prior.Base.Rounds, pass.Rounds[0]...)}
	out.Head = judge.Side{Results: append(prior.Head.Results, pass.Results[1]...), Rounds: append(prior.Head.Rounds, pass.Rounds[1]...)}
	for k, u := range prior.Units {
		out.Units[k] = u
	}
	return out, pass, err
}
