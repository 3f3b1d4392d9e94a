package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/runner/progress"
	"github.com/backfill-bench/backfill-bench/harness/testbed"
	"github.com/backfill-bench/backfill-bench/internal/files"
)

// Side is one build of the benchmarks: a plain run has one, a compare two.
type Side struct {
	Label    string // "" in a plain run; "base" or "head"
	Checkout testbed.Checkout
	Binary   string
	File     string // its results file, rewritten after every trial ("": none)
	// Prior are results of earlier passes that File holds before this pass's.
	Prior []*benchfmt.Result
}

// PassConfig says where and how a pass runs its trials.
type PassConfig struct {
	Dir          string // the results directory, absolute; traces go under traces/
	Name         string // "" for the main pass; another name keeps its traces and failures apart
	Profiles     *profile.Set
	ProfileFiles []string      // absolute, for the bench binary
	Timeout      time.Duration // per job (0: DefaultTimeout)
	Machine      testbed.Machine
	Progress     io.Writer // progress bar or log lines; nil: none
	Terminal     bool      // Progress is a terminal: draw a bar
	Logger       *slog.Logger
	Pairing      Pairing // how the two runs of a pair share the machine ("": Sequential)
	// Instructions, when set, counts every job's instructions under callgrind
	// (Pairing then does not apply: jobs run as many at once as there are CPUs).
	Instructions *Instructions
	// Warmup runs each job's process with -warmup: one
	// untimed job before the timed one, so that jobs of different benchmarks (a
	// cell and its baselines) meet the same process state; its results say so
	// (contract.ConfigWarmup).
	Warmup bool
	// AfterTrial, when set, runs after each trial finished (or failed), before the
	// next starts: a run's replay baselines go there, so a cell and its replay
	// meet the same load.
	AfterTrial func(ctx context.Context, t Trial)
}

// Failure is a trial that did not produce a verified result.
type Failure struct {
	Trial  Trial
	Side   string // "base" or "head" in a compare
	Reason string // "exit status 2", "timeout after 10m", "no result for the cell"
	Tail   string // the end of its output
}

// reason is why the trial failed, "" when f is nil.
func (f *Failure) reason() string {
	if f == nil {
		return ""
	}
	return f.Reason
}

// PassResult is what a pass left: per side, its results in plan order and the
// trace files of its trials.
type PassResult struct {
	Results  [][]*benchfmt.Result
	Rounds   [][]int // the round of each result, parallel to Results
	Traces   [][]string
	Units    benchfmt.UnitMetadataMap
	Failures []Failure
	Done     int // trials finished, failed or not
	Planned  int
}

// pass is the state of one pass: fresh for every pass, so counters, traces and
// failures of one never mix with another's.
type pass struct {
	cfg     PassConfig
	sides   []Side
	trials  []Trial
	results []map[int][]*benchfmt.Result // per side, by trial index
	out     *PassResult
}

// RunPass runs the trials, each on its side, stopping early only when ctx is done;
// with cfg.Pairing Duet, the two runs of each pair run at once. A failed trial is
// recorded and the rest go on; the results files and failures file are rewritten
// after every trial, so an interruption loses nothing finished. The error is about
// the results directory or a bench binary that cannot be probed; see PassResult.Err
// for the trials'.
func RunPass(ctx context.Context, cfg PassConfig, sides []Side, trials []Trial) (*PassResult, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	p := &pass{cfg: cfg, sides: sides, trials: trials,
		out: &PassResult{Results: make([][]*benchfmt.Result, len(sides)), Rounds: make([][]int, len(sides)), Traces: make([][]string, len(sides)), Units: benchfmt.UnitMetadataMap{}, Planned: len(trials)}}
	for range sides {
		p.results = append(p.results, map[int][]*benchfmt.Result{})
	}
	prog := progress.New(cfg.Progress, cfg.Terminal, cfg.Logger, len(trials))
	if cfg.Instructions != nil {
		err := p.runCounted(ctx, prog)
		prog.Finish()
		return p.out, err
	}
	duet := false
	if cfg.Pairing == Duet {
		var err error
		if duet, err = p.gated(ctx); err != nil {
			return p.out, err
		}
	}
	tooWide := map[string]bool{} // profiles whose CPUs leave no room for a duet, said once
	for i := 0; i < len(trials); i++ {
		if ctx.Err() != nil {
			break
		}
		group := trials[i : i+1]
		prof, _ := cfg.Profiles.Get(trials[i].Cell.Profile)
		if duet && i+1 < len(trials) && paired(trials[i], trials[i+1]) {
			if duetFits(prof) {
				group = trials[i : i+2]
				i++
			} else if !tooWide[prof.Name] {
				tooWide[prof.Name] = true
				cfg.Logger.Warn("profile "+prof.Name+" asks for more CPUs than half of this machine's: its pairs run one after the other", "cpus", prof.CPUs)
			}
		}
		for _, t := range group {
			prog.Start(t.Cell.Name())
		}
		var outs []outcome
		ranDuet := false
		if len(group) == 2 {
			outs, ranDuet = p.runDuet(ctx, prof, group[0], group[1])
		} else {
			outs = []outcome{p.runOne(ctx, sides[group[0].Side], prof, group[0])}
		}
		for j, t := range group {
			o := outs[j]
			if ctx.Err() != nil && o.failure != nil {
				continue // interrupted: neither a result nor a failure; its partner's finished result is kept
			}
			if err := p.record(t, prof, o, ranDuet); err != nil {
				return p.out, err
			}
			prog.Done(t.Index, t.Cell.Name(), o.failure.reason())
		}
		if ctx.Err() != nil {
			break
		}
		if cfg.AfterTrial != nil {
			for _, t := range group {
				cfg.AfterTrial(ctx, t)
			}
		}
	}
	prog.Finish()
	return p.out, nil
}

// record keeps a finished trial's outcome and rewrites its side's results file (or
// the failures file).
func (p *pass) record(t Trial, prof profile.Profile, o outcome, duet bool) error {
	s := p.sides[t.Side]
	p.out.Done++
	if o.failure != nil {
		p.out.Failures = append(p.out.Failures, *o.failure)
		if err := p.writeFailures(); err != nil {
			return err
		}
	} else {
		for _, r := range o.results {
			addConfig(r, s.Checkout, p.cfg.Machine, prof, duet)
			warmConfig(p.cfg.Warmup, r)
			if p.cfg.Instructions != nil {
				countedConfig(r, p.cfg.Instructions)
			}
		}
		p.results[t.Side][t.Index] = o.results
		p.out.Traces[t.Side] = append(p.out.Traces[t.Side], o.trace)
		maps.Copy(p.out.Units, o.units)
	}
	p.out.Results[t.Side], p.out.Rounds[t.Side] = p.ordered(t.Side)
	if s.File == "" {
		return nil
	}
	data, err := contract.Encode(append(slices.Clip(s.Prior), p.out.Results[t.Side]...), p.out.Units)
	if err == nil {
		err = files.WriteAtomic(filepath.Join(p.cfg.Dir, s.File), data)
	}
	return err
}

// Err summarizes a pass that is over: interrupted, with failed trials, or nil.
func (r *PassResult) Err(ctx context.Context, dir string) error {
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted after %d of %d runs; the finished ones are in %s", r.Done, r.Planned, dir)
	}
	if len(r.Failures) > 0 {
		return fmt.Errorf("%d of %d runs failed (see %s)", len(r.Failures), r.Planned, filepath.Join(dir, "failures.txt"))
	}
	return nil
}

// ordered lists a side's results by cell in plan order and by round within a
// cell, so that config lines change rarely in its file, with each one's round.
func (p *pass) ordered(side int) ([]*benchfmt.Result, []int) {
	var cells []contract.Cell
	byCell := map[contract.Cell][]Trial{}
	for _, t := range p.trials {
		if t.Side != side {
			continue
		}
		if _, ok := byCell[t.Cell]; !ok {
			cells = append(cells, t.Cell)
		}
		byCell[t.Cell] = append(byCell[t.Cell], t)
	}
	var out []*benchfmt.Result
	var rounds []int
	for _, c := range cells {
		for _, t := range byCell[c] {
			for _, r := range p.results[side][t.Index] {
				out = append(out, r)
				rounds = append(rounds, t.Round)
			}
		}
	}
	return out, rounds
}

type outcome struct {
	results []*benchfmt.Result
	units   benchfmt.UnitMetadataMap
	trace   string
	failure *Failure
}

// traceDir is where a side's traces of this pass go: traces/[pass/][side/].
func (p *pass) traceDir(s Side) string {
	return filepath.Join(p.cfg.Dir, "traces", p.cfg.Name, s.Label)
}

// runOne runs one job of the cell in its own process of the side's bench binary.
func (p *pass) runOne(ctx context.Context, s Side, prof profile.Profile, t Trial) outcome {
	j, o := p.newJob(ctx, s, prof, t, 0)
	if j == nil {
		return o
	}
	defer j.proc.Close()
	return j.outcome(ctx, j.proc.Run())
}

// job is one trial's process.
type job struct {
	t               Trial
	side            string
	proc            *Process
	stdout          bytes.Buffer
	stderr          *tailBuffer
	trace, tmpTrace string
	callgrindOut    string // its instruction counts (--measure instructions)
}

// newJob makes a trial's process, not started; a nil job comes with the failure.
// With duetProcs > 0 it is one run of a duet: on that many CPUs, behind the start gate.
func (p *pass) newJob(ctx context.Context, s Side, prof profile.Profile, t Trial, duetProcs int) (*job, outcome) {
	dir := p.traceDir(s)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, outcome{failure: &Failure{Trial: t, Side: s.Label, Reason: err.Error()}}
	}
	j := &job{t: t, side: s.Label, stderr: &tailBuffer{max: 8 << 10}}
	j.trace = filepath.Join(dir, traceName(t))
	j.tmpTrace = j.trace + ".tmp"
	os.Remove(j.tmpTrace)
	spec := Job{Binary: s.Binary, Args: warmArgs(p.cfg.Warmup, t.Cell.Args(j.tmpTrace, p.cfg.ProfileFiles)), Dir: p.cfg.Dir, CPUs: prof.CPUs,
		Timeout: p.cfg.Timeout, Stdout: &j.stdout, Stderr: j.stderr}
	if duetProcs > 0 {
		spec.CPUs, spec.Diagnostics = duetProcs, []string{"-" + contract.FlagStartGate}
	}
	if p.cfg.Instructions != nil {
		j.callgrindOut = strings.TrimSuffix(j.trace, ".jsonl") + ".callgrind.out"
		for _, old := range append(globOr(j.callgrindOut+".*"), j.callgrindOut) {
			os.Remove(old) // an earlier pass's, which ReadWindows would add up
		}
		spec.Callgrind = j.callgrindOut
	}
	j.proc = spec.Process(ctx)
	return j, outcome{}
}

// outcome reads the results of the job's finished process; err is its exit.
func (j *job) outcome(ctx context.Context, err error) outcome {
	t := j.t
	fail := func(reason string) outcome {
		os.Remove(j.tmpTrace)
		return outcome{failure: &Failure{Trial: t, Side: j.side, Reason: reason, Tail: failureTail(j.stdout.String(), j.stderr.String())}}
	}
	err = j.proc.Err(err)
	switch {
	case errors.Is(err, ErrTimeout):
		return fail(err.Error())
	case ctx.Err() != nil:
		return fail("interrupted")
	case err != nil:
		return fail(err.Error())
	}
	out := outcome{units: benchfmt.UnitMetadataMap{}, trace: j.trace}
	r := benchfmt.NewReader(bytes.NewReader(j.stdout.Bytes()), "run "+strconv.Itoa(t.Index))
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			if c, ok := contract.CellOf(rec); ok && c == t.Cell {
				out.results = append(out.results, rec.Clone())
			}
		case *benchfmt.UnitMetadata:
			u := *rec
			out.units[u.UnitMetadataKey] = &u
		}
	}
	if len(out.results) == 0 {
		return fail("no result for the cell in the output")
	}
	// A bench binary that wrote no trace (an older commit) still has its results.
	if err := os.Rename(j.tmpTrace, j.trace); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			return fail("trace: " + err.Error())
		}
		out.trace = ""
	}
	if j.callgrindOut != "" {
		if err := addInstructions(&out, j.callgrindOut); err != nil {
			return fail("instructions: " + err.Error())
		}
	}
	return out
}

// traceName is the trace file of a trial: the cell's values and the round.
func traceName(t Trial) string {
	m := t.Cell.Only()
	var vals []string
	for _, d := range contract.DimensionNames() {
		vals = append(vals, strings.NewReplacer(":", "-", "+", "-", ",", "-").Replace(m.Get(d)))
	}
	return fmt.Sprintf("%s.r%d.jsonl", strings.Join(vals, "_"), t.Round)
}

// addConfig adds the harness's config keys to a result of the profile's job, run
// alone or in a duet.
func addConfig(r *benchfmt.Result, src testbed.Checkout, m testbed.Machine, p profile.Profile, duet bool) {
	procs := m.Cores
	if p.CPUs > 0 {
		procs = p.CPUs
	}
	pairing := ""
	if duet {
		procs, pairing = duetProcs(p), string(Duet)
	}
	testbed.AddConfig(r, src, m, p, procs, pairing)
}

// warmArgs are a job's arguments, with -warmup when warm.
func warmArgs(warm bool, args []string) []string {
	if warm {
		return append(args, "-"+contract.FlagWarmup)
	}
	return args
}

// warmConfig records on a result that its job was warmed up (when warm), so that
// it is never compared with one that was not: the first job of a process pays for
// growing its heap, and is slower for it.
func warmConfig(warm bool, r *benchfmt.Result) {
	if warm {
		testbed.SetFileConfig(r, contract.ConfigWarmup, "1 job")
	}
}

// writeFailures rewrites the pass's failures file: failures.txt, or
// <pass>-failures.txt.
func (p *pass) writeFailures() error {
	var b strings.Builder
	for _, f := range p.out.Failures {
		side := ""
		if f.Side != "" {
			side = ", " + f.Side
		}
		fmt.Fprintf(&b, "run %d (round %d%s) Benchmark%s: %s\n", f.Trial.Index, f.Trial.Round, side, f.Trial.Cell.FullName(), f.Reason)
		for _, l := range strings.Split(strings.TrimRight(f.Tail, "\n"), "\n") {
			fmt.Fprintf(&b, "    %s\n", l)
		}
	}
	name := "failures.txt"
	if p.cfg.Name != "" {
		name = p.cfg.Name + "-" + name
	}
	return files.WriteAtomic(filepath.Join(p.cfg.Dir, name), []byte(b.String()))
}

// failureTail is the end of a failed run's output: its stdout without the lines
// benchstat reads, then its stderr.
func failureTail(stdout, stderr string) string {
	var keep []string
	for _, l := range strings.Split(stdout, "\n") {
		k, _, _ := strings.Cut(l, ":")
		switch {
		case strings.HasPrefix(l, "Unit "), strings.HasPrefix(l, "Benchmark") && strings.Contains(l, "\t"):
		case k == "goos" || k == "goarch" || k == "pkg" || k == "cpu":
		default:
			keep = append(keep, l)
		}
	}
	out := strings.TrimSpace(strings.Join(keep, "\n") + "\n" + stderr)
	const lines = 20
	if ls := strings.Split(out, "\n"); len(ls) > lines {
		out = strings.Join(ls[len(ls)-lines:], "\n")
	}
	return out
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.buf) }
