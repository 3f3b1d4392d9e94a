package runner

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/runner/cost"
)

// Extra is a benchmark run beside the cells, after them: a baseline or a recovery.
type Extra interface {
	Name() string        // as the bench binary reports it, without the GOMAXPROCS suffix
	cell() contract.Cell // the cell whose job (or table) it runs, on its profile
	args(profileFiles []string) []string
}

// Recovery is a BenchmarkRecovery run: the cell's job, its power cut once Crash
// per cent of its snapshot rows were emitted.
type Recovery struct {
	Cell  contract.Cell
	Crash int
}

// Name is BenchmarkRecovery's name for it.
func (r Recovery) Name() string {
	return "Recovery/" + r.Cell.RecoveryName(strconv.Itoa(r.Crash)+"%")
}

func (r Recovery) cell() contract.Cell { return r.Cell }

func (r Recovery) args(profileFiles []string) []string {
	args := selecting(r.Cell.Args("", profileFiles), contract.BenchRegexp("Recovery", strings.TrimPrefix(r.Name(), "Recovery/")))
	return append(args, "-"+contract.FlagCrash, strconv.Itoa(r.Crash)+"%")
}

// selecting is a cell's arguments with -test.bench selecting re instead of the cell.
func selecting(args []string, re string) []string {
	for i := range args {
		if args[i] == "-test.bench" && i+1 < len(args) {
			args[i+1] = re
		}
	}
	return args
}

// RawCopy is a raw copy to run beside the cells: one table of one profile, as the
// first of its cells gives it (the binary's other flags select nothing of it).
type RawCopy struct{ Cell contract.Cell }

// Name is the raw copy's benchmark name, as BenchmarkRawCopy reports it.
func (r RawCopy) Name() string { return r.Cell.BaselineName(contract.RawCopyBenchmark) }

func (r RawCopy) cell() contract.Cell { return r.Cell }

// RawCopiesOf are the distinct tables of the cells, in their order.
func RawCopiesOf(cells []contract.Cell) []Extra {
	seen := map[string]bool{}
	var out []Extra
	for _, c := range cells {
		if !seen[c.RawCopyName()] {
			seen[c.RawCopyName()] = true
			out = append(out, RawCopy{c})
		}
	}
	return out
}

// args run exactly this raw copy once: its cell's flags, BenchmarkRawCopy selected.
func (r RawCopy) args(profileFiles []string) []string {
	return selecting(r.Cell.Args("", profileFiles), contract.BenchRegexp(contract.RawCopyBenchmark, r.Cell.RawCopyName()))
}

// Baseline is a replay or scan-only baseline of a cell (contract.Baselines).
type Baseline struct {
	Cell      contract.Cell
	Benchmark string // contract.ReplayBenchmark or contract.ScanOnlyBenchmark
}

// Name is the baseline's benchmark name, as the bench binary reports it.
func (b Baseline) Name() string { return b.Cell.BaselineName(b.Benchmark) }

func (b Baseline) cell() contract.Cell { return b.Cell }

// args run exactly this baseline once: the cell's flags, its benchmark selected.
func (b Baseline) args(profileFiles []string) []string {
	return selecting(b.Cell.Args("", profileFiles), contract.BenchRegexp(b.Benchmark, strings.TrimPrefix(b.Name(), b.Benchmark+"/")))
}

// BaselinesOf are the baselines of the cells, table by table in the cells' order:
// each table's append-order copy, then each distinct scan's scan-only read, then
// every cell's replay.
func BaselinesOf(cells []contract.Cell) []Extra {
	var out []Extra
	seen := map[string]bool{}
	for _, rc := range RawCopiesOf(cells) {
		out = append(out, rc)
		r := rc.(RawCopy)
		for _, kind := range []string{contract.ScanOnlyBenchmark, contract.ReplayBenchmark} {
			for _, c := range cells {
				b := Baseline{c, kind}
				if c.RawCopyName() == r.Cell.RawCopyName() && !seen[b.Name()] {
					seen[b.Name()] = true
					out = append(out, b)
				}
			}
		}
	}
	return out
}

// EstimateBaselines is the seconds count rounds of the cells' baselines take, by
// cost.Run of their cells; warm: each but a recovery with its warm-up job
// (PassConfig.Warmup).
func EstimateBaselines(cells []contract.Cell, set *profile.Set, count int, warm bool) float64 {
	pc := PassConfig{Warmup: warm}
	sum := 0.0
	for _, e := range BaselinesOf(cells) {
		p, _ := set.Get(e.cell().Profile)
		f := float64(cost.TableRead)
		if b, ok := e.(Baseline); ok && b.Benchmark == contract.ReplayBenchmark {
			f = cost.Replay // its recording is its warm-up
		} else if pc.warmsExtra(e) {
			f *= cost.Warmup
		}
		sum += f * cost.Run(e.cell(), p)
	}
	return sum * float64(count)
}

// TableBaselinesOf are BaselinesOf without the replays: the baselines of a table
// or scan, run after the cells, where each replay runs right after its cell's job.
func TableBaselinesOf(cells []contract.Cell) []Extra {
	var out []Extra
	for _, e := range BaselinesOf(cells) {
		if b, ok := e.(Baseline); !ok || b.Benchmark != contract.ReplayBenchmark {
			out = append(out, e)
		}
	}
	return out
}

// RunExtras runs each extra count times on the side's binary, round by round
// (after the cells, not interleaved with them), and returns their results with the
// harness's config and, per run that failed, a line saying why followed by the end
// of its output (indented), as failures.txt holds them.
func RunExtras(ctx context.Context, cfg PassConfig, s Side, extras []Extra, count int) ([]*benchfmt.Result, []string) {
	var results []*benchfmt.Result
	var failed []string
	for round := 1; round <= count; round++ {
		res, f := RunExtrasOfRound(ctx, cfg, s, extras, round)
		results, failed = append(results, res...), append(failed, f...)
		if ctx.Err() != nil {
			break
		}
	}
	return results, failed
}

// RunExtrasOfRound runs each extra once as RunExtras's round (a replay after its cell's job).
func RunExtrasOfRound(ctx context.Context, cfg PassConfig, s Side, extras []Extra, round int) ([]*benchfmt.Result, []string) {
	var results []*benchfmt.Result
	var failed []string
	for _, rc := range extras {
		if ctx.Err() != nil {
			return results, append(failed, "interrupted")
		}
		prof, err := cfg.Profiles.Get(rc.cell().Profile)
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", rc.Name(), err))
			continue
		}
		var stdout bytes.Buffer
		stderr := &tailBuffer{max: 8 << 10}
		warm := cfg.warmsExtra(rc)
		err = Job{Binary: s.Binary, Args: warmArgs(warm, rc.args(cfg.ProfileFiles)), Dir: cfg.Dir, CPUs: prof.CPUs, Timeout: cfg.Timeout,
			Stdout: &stdout, Stderr: stderr}.Run(ctx)
		if err != nil {
			failed = append(failed, extraFailure(rc, round, err.Error(), failureTail(stdout.String(), stderr.String())))
			continue
		}
		found := false
		r := benchfmt.NewReader(bytes.NewReader(stdout.Bytes()), rc.Name())
		for r.Scan() {
			if res, ok := r.Result().(*benchfmt.Result); ok && contract.Label(string(res.Name)) == rc.Name() {
				res = res.Clone()
				addConfig(res, s.Checkout, cfg.Machine, prof, false)
				warmConfig(warm, res)
				results = append(results, res)
				found = true
			}
		}
		if !found {
			failed = append(failed, extraFailure(rc, round, "no result in the output", failureTail(stdout.String(), stderr.String())))
		}
	}
	return results, failed
}

// warmsExtra says whether the pass warms up a run of rc (PassConfig.Warmup):
// never a recovery's (BenchmarkRecovery has no warm-up).
func (c PassConfig) warmsExtra(rc Extra) bool {
	_, recovery := rc.(Recovery)
	return !recovery && c.Warmup
}

// extraFailure is a failed extra run's entry in failures.txt: why, then the end of
// its output, indented.
func extraFailure(rc Extra, round int, reason, tail string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "after the cells (round %d) Benchmark%s: %s\n", round, rc.Name(), reason)
	for _, l := range strings.Split(strings.TrimRight(tail, "\n"), "\n") {
		if l != "" {
			fmt.Fprintf(&b, "    %s\n", l)
		}
	}
	return b.String()
}
