package harness

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/gate"
	"github.com/backfill-bench/backfill-bench/contract/jobtrace"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/runner"
	"github.com/backfill-bench/backfill-bench/harness/runner/cost"
	"github.com/backfill-bench/backfill-bench/harness/testbed"
)

// The test binary doubles as a fake bench binary when this variable is set; the
// cell's row count picks what it does (see fakeBench).
const fakeEnv = "BACKFILL_BENCH_FAKE"

// fakeLogEnv, when set, names a file the fake appends each run's -test.bench to.
const fakeLogEnv = "BACKFILL_BENCH_FAKE_LOG"

func TestMain(m *testing.M) {
	if os.Getenv(fakeEnv) != "" {
		os.Exit(fakeBench(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// Row counts that make the fake misbehave.
const (
	rowsOK         = 1
	rowsCrash      = 2 // dies like a panic
	rowsHang       = 3 // never finishes
	rowsVerifyFail = 4 // the job's B != A check fails
	rowsWrongCell  = 5 // exits 0 without the cell's result
	rowsCopyFails  = 6 // the cell runs; its raw copy dies
)

func fakeBench(args []string) int {
	fs := flag.NewFlagSet("fake", flag.ContinueOnError)
	for _, name := range contract.TestingFlags {
		fs.String(name, "", "")
	}
	flags := contract.Register(fs, QuickMatrix()) // as the bench binary: unnamed dimensions take defaults
	if err := fs.Parse(args); err != nil {
		return 2
	}
	m, err := flags.Matrix()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if fs.Lookup("test.bench").Value.String() == "^$" {
		return 0 // no benchmark, as the real binary (the runner's probe)
	}
	if name := os.Getenv(fakeLogEnv); name != "" {
		f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = fmt.Fprintln(f, fs.Lookup("test.bench").Value.String())
			err = errors.Join(err, f.Close())
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if *flags.StartGate {
		if err := gate.AwaitStart(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Println("Unit rows/s better=higher\ngoos: linux\ngoarch: amd64\npkg: fake\ncpu: fake")
	if bench := fs.Lookup("test.bench").Value.String(); strings.HasPrefix(bench, "^BenchmarkRawCopy$") {
		if m.Rows[0] == rowsCopyFails {
			fmt.Fprintln(os.Stderr, "panic: raw copy: short write")
			return 2
		}
		fmt.Printf("BenchmarkRawCopy/profile=%s/workload=%s/rows=%d-2 \t1\t1000 ns/op\t3000 rows/s\nPASS\n", m.Profiles[0], m.Workloads[0], m.Rows[0])
		return 0
	}
	cell := m.Cells()[0]
	for _, base := range []string{contract.ReplayBenchmark, contract.ScanOnlyBenchmark} {
		if bench := fs.Lookup("test.bench").Value.String(); strings.HasPrefix(bench, "^Benchmark"+base+"$") {
			fmt.Printf("Benchmark%s-2 \t1\t900 ns/op\t3300 rows/s\nPASS\n", cell.BaselineName(base))
			return 0
		}
	}
	if bench := fs.Lookup("test.bench").Value.String(); strings.HasPrefix(bench, "^BenchmarkRecovery$") {
		pct, _ := strconv.Atoi(strings.TrimSuffix(*flags.Crash, "%"))
		reemitted := cell.Rows * int64(pct) / 100
		if cell.Persist {
			reemitted = 1
		}
		fmt.Printf("Benchmark%s-2 \t1\t2000000 ns/op\t0.3 recovery-sec\t%d reemitted-rows\nPASS\n", runner.Recovery{Cell: cell, Crash: pct}.Name(), reemitted)
		return 0
	}
	switch cell.Rows {
	case rowsCrash:
		fmt.Fprintln(os.Stderr, "panic: runtime error: index out of range [3] with length 3")
		return 2
	case rowsHang:
		time.Sleep(time.Hour)
	case rowsVerifyFail:
		fmt.Printf("--- FAIL: BenchmarkBackfill/%s\n    bench_test.go:99: pipeline: MV differs from upstream at pk (7): missing in MV\nFAIL\n", cell.Name())
		return 1
	case rowsWrongCell:
		fmt.Println("PASS")
		return 0
	}
	rowsPerSec := 1000.0
	if cell.Persist {
		rowsPerSec = 900
	}
	fmt.Printf("BenchmarkBackfill/%s-2 \t1\t%d ns/op\t%g rows/s\nPASS\n", cell.Name(), 1000000, rowsPerSec)
	if err := jobtrace.AppendTrace(*flags.Trace, jobtrace.Trace{Cell: cell.Name()}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func fakeConfig(t *testing.T, rows string, count int) RunConfig {
	t.Helper()
	t.Setenv(fakeEnv, "1")
	m := QuickMatrix()
	m.Profiles, m.Workloads = []string{"mem"}, []string{"narrow"}
	if err := m.Set("rows", rows); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return RunConfig{
		Measure: Measure{Matrix: m, Count: count, Src: ".", Timeout: 5 * time.Second},
		Output:  Output{Stdout: &bytes.Buffer{}},
		Out:     t.TempDir(), Binary: exe,
		CommandLine: []string{"benchrun", "run", "--rows", rows},
	}
}

func readResults(t *testing.T, dir string) []*benchfmt.Result {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "results.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []*benchfmt.Result
	r := benchfmt.NewReader(f, "results.txt")
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			out = append(out, rec.Clone())
		case *benchfmt.SyntaxError:
			t.Errorf("results.txt: %v", rec)
		}
	}
	return out
}

func TestRunRecordsFailedCellsAndGoesOn(t *testing.T) {
	for _, tc := range []struct {
		name, reason string
		rows         int
	}{
		{"crash", "exit status 2", rowsCrash},
		{"hang", "timeout after", rowsHang},
		{"verification", "exit status 1", rowsVerifyFail},
		{"no result", "no result for the cell", rowsWrongCell},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := fakeConfig(t, fmt.Sprintf("%d,%d", rowsOK, tc.rows), 2)
			if tc.rows == rowsHang {
				cfg.Timeout = 2 * time.Second // the fake (this test binary) may take 300 ms to start on a busy machine
			}
			rep, err := Run(context.Background(), cfg)
			if err == nil || !strings.Contains(err.Error(), "4 of 8 runs failed") {
				b, _ := os.ReadFile(filepath.Join(cfg.Out, "failures.txt"))
				t.Fatalf("err = %v, want 4 of 8 runs failed\n%s", err, b)
			}
			if rep.Pass.Done != 8 || len(rep.Pass.Failures) != 4 {
				t.Fatalf("done %d, failures %d; want 8 and 4", rep.Pass.Done, len(rep.Pass.Failures))
			}
			for _, f := range rep.Pass.Failures {
				if f.Trial.Cell.Rows != int64(tc.rows) || !strings.Contains(f.Reason, tc.reason) {
					t.Errorf("failure %+v: want rows=%d and reason %q", f, tc.rows, tc.reason)
				}
			}
			results := readResults(t, cfg.Out)
			if len(results) != 4 {
				t.Fatalf("results.txt has %d results, want the 4 of the good cell", len(results))
			}
			for _, r := range results {
				if c, _ := contract.CellOf(r); c.Rows != rowsOK {
					t.Errorf("result of %s, want only rows=%d", r.Name, rowsOK)
				}
				if v, _ := r.ConfigIndex("machine"); v < 0 {
					t.Errorf("result has no machine config")
				}
			}
			failures, err := os.ReadFile(filepath.Join(cfg.Out, "failures.txt"))
			if err != nil {
				t.Fatal(err)
			}
			want := map[int]string{rowsCrash: "index out of range", rowsVerifyFail: "MV differs from upstream"}[tc.rows]
			if !strings.Contains(string(failures), want) {
				t.Errorf("failures.txt lacks the output tail %q:\n%s", want, failures)
			}
			traces, _ := filepath.Glob(filepath.Join(cfg.Out, "traces", "*"))
			if len(traces) != 4 {
				t.Errorf("traces %v: want one per successful run", traces)
			}
		})
	}
}

func TestRunInterleavesAndSummarizes(t *testing.T) {
	cfg := fakeConfig(t, "1", 6)
	cfg.Progress = &bytes.Buffer{}
	cfg.Terminal = true
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Each round ran off and on back to back, on first in every second round.
	var order []bool
	for _, r := range runner.Plan(cfg.Matrix.Cells(), cfg.Count, 1) {
		order = append(order, r.Cell.Persist)
	}
	if fmt.Sprint(order) != "[false true true false false true true false false true true false]" {
		t.Errorf("plan order %v, want persist off and on back to back, in turn first", order)
	}
	if len(rep.Results) != 12 {
		t.Fatalf("%d results, want 12", len(rep.Results))
	}
	summary := cfg.Stdout.(*bytes.Buffer).String()
	for _, want := range []string{"persist=off", "persist=on", "rows/s ↑", "-10.00% [-10.0%, -10.0%] (p=0.031, 6 pairs) worse", "+0.00% [+0.0%, +0.0%] (p=1.000, 6 pairs)", "results: " + cfg.Out} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
	if _, err := os.Stat(filepath.Join(cfg.Out, "summary.txt")); err != nil {
		t.Error(err)
	}
	if got, _ := os.ReadFile(filepath.Join(cfg.Out, "command.txt")); string(got) != "benchrun run --rows 1\n" {
		t.Errorf("command.txt = %q", got)
	}
	if !strings.Contains(cfg.Progress.(*bytes.Buffer).String(), "12 runs in") {
		t.Errorf("progress output: %q", cfg.Progress.(*bytes.Buffer).String())
	}

	// benchstat itself reads the file.
	out, err := exec.Command("go", "tool", "benchstat", "-col", "/persist", filepath.Join(cfg.Out, "results.txt")).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool benchstat: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "rows/s") || !strings.Contains(string(out), "off") {
		t.Errorf("benchstat output:\n%s", out)
	}
}

func TestRunInterruptKeepsFinishedResults(t *testing.T) {
	// Cell rows=1 finishes; rows=3 hangs until the context is cancelled.
	cfg := fakeConfig(t, fmt.Sprintf("%d,%d", rowsOK, rowsHang), 1)
	cfg.Timeout = time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(2*time.Second, cancel)
	start := time.Now()
	rep, err := Run(ctx, cfg)
	if err == nil || !strings.Contains(err.Error(), "interrupted after 2 of 4 runs") {
		t.Fatalf("err = %v, want interrupted after 2 of 4 runs", err)
	}
	if time.Since(start) > 30*time.Second {
		t.Errorf("stopping took %v", time.Since(start))
	}
	if len(rep.Pass.Failures) != 0 {
		t.Errorf("an interrupted run is not a failure: %+v", rep.Pass.Failures)
	}
	if results := readResults(t, cfg.Out); len(results) != 2 {
		t.Errorf("results.txt holds %d results, want the 2 finished", len(results))
	}
}

func TestDryRunValidates(t *testing.T) {
	cfg := fakeConfig(t, "1", 1)
	cfg.DryRun = true
	cfg.Matrix.Profiles = []string{"mem", "nosuch"}
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), `unknown profile "nosuch"`) {
		t.Errorf("err = %v", err)
	}
	cfg.Count = 0
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "--count") {
		t.Errorf("err = %v", err)
	}
}

// TestMergeShardsEqualsUnsharded runs the fake matrix whole and in three shards and
// checks the merged shard files hold the same results.
func TestMergeShardsEqualsUnsharded(t *testing.T) {
	lines := func(data []byte) []string {
		var out []string
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "Benchmark") {
				out = append(out, l)
			}
		}
		sort.Strings(out)
		return out
	}
	whole := fakeConfig(t, "1,6,7", 2)
	whole.Matrix.Workloads = []string{"narrow", "bid"}
	if _, err := Run(context.Background(), whole); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(whole.Out, "results.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for i := 1; i <= 3; i++ {
		cfg := whole
		cfg.Out, cfg.Shard = t.TempDir(), runner.Shard{Index: i, Count: 3}
		if _, err := Run(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.Join(cfg.Out, "results.txt"))
	}
	merged, err := contract.Merge(files...)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := lines(merged), lines(want); !slices.Equal(got, want) {
		t.Errorf("merged shards:\n%s\nunsharded:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(string(merged), "Unit rows/s better=higher") || !strings.Contains(string(merged), "machine: ") {
		t.Errorf("merged file lost its unit or config lines:\n%s", merged)
	}
}

// TestNoiseReportsSpread runs the A/A measurement on the fake bench binary, whose
// figures do not move: no spread, and the fewest rounds the signed-rank test needs.
func TestNoiseReportsSpread(t *testing.T) {
	run := fakeConfig(t, "1", 6)
	th := judge.DefaultThresholds()
	th.Set("rows/s=3%")
	cfg := NoiseConfig{Measure: run.Measure, Output: run.Output, Out: run.Out, Binary: run.Binary,
		Options: judge.Options{Thresholds: th, Correction: judge.Holm, Alpha: 0.05}}
	rows, err := Noise(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 { // rows/s of persist off and on
		t.Fatalf("rows %+v, want rows/s of two cells", rows)
	}
	for _, r := range rows {
		// 2/2ⁿ ≤ 0.05/2 needs n ≥ 7.
		if r.N != 6 || r.RunCV != 0 || r.PairSD != 0 || r.Rounds != 7 {
			t.Errorf("%+v: want 6 rounds, no spread, 7 rounds to detect", r)
		}
	}
	out := cfg.Stdout.(*bytes.Buffer).String()
	if !strings.Contains(out, "paired ratio sd") || !strings.Contains(out, "rounds for it") {
		t.Errorf("noise table:\n%s", out)
	}
	for _, f := range []string{"a.txt", "b.txt", "noise.txt"} {
		if _, err := os.Stat(filepath.Join(cfg.Out, f)); err != nil {
			t.Error(err)
		}
	}
}

// TestDryRunSkipsTooLarge: a plan says which cells are too large for the machine
// and why; a matrix of nothing but such cells is refused.
func TestDryRunSkipsTooLarge(t *testing.T) {
	cfg := fakeConfig(t, "1", 1)
	cfg.DryRun = true
	cfg.Matrix.Profiles, cfg.Matrix.Rows = []string{"mem"}, []int64{1000, 1_000_000_000}
	cfg.Room = func() testbed.Room { return testbed.Room{Memory: 8 << 30} }
	var out strings.Builder
	cfg.Stdout = &out
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "skipped, too large for this machine: profile=mem/workload=narrow/rows=1000000000") || strings.Contains(out.String(), "skipped, too large for this machine: profile=mem/workload=narrow/rows=1000/") {
		t.Errorf("plan:\n%s", out.String())
	}
	cfg.Matrix.Rows = []int64{1_000_000_000}
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "every cell is too large") {
		t.Errorf("err = %v", err)
	}
}

// TestDryRunSkipsImpossible: a sweep of vnodes and par plans the cells where every
// actor owns a vnode, says in the plan and the log which pairs it left out, and is
// refused, naming both flags, when no cell is left.
func TestDryRunSkipsImpossible(t *testing.T) {
	for _, tc := range []struct {
		vnodes, par string
		plan        string // the plan's first words; "": refused
		skipped     string // in the plan and the log
		err         string
	}{
		{"1,256", "1,2", "plan: 6 cells × 1 rounds", "vnodes=1 with par=2 (2 cells): each actor owns at least one vnode", ""},
		{"4,256", "1,2", "plan: 8 cells × 1 rounds", "", ""},
		{"1", "2,4", "", "", "--vnodes 1 with --par 2,4: no cell left"},
	} {
		cfg := fakeConfig(t, "1000", 1)
		cfg.DryRun = true
		if err := cfg.Matrix.Set("vnodes", tc.vnodes); err != nil {
			t.Fatal(err)
		}
		if err := cfg.Matrix.Set("par", tc.par); err != nil {
			t.Fatal(err)
		}
		var out, log strings.Builder
		cfg.Stdout, cfg.Logger = &out, slog.New(slog.NewTextHandler(&log, nil))
		_, err := Run(context.Background(), cfg)
		if tc.err != "" {
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("--vnodes %s --par %s: err = %v, want a ConfigError with %q", tc.vnodes, tc.par, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		plan := out.String()
		if !strings.HasPrefix(plan, tc.plan) || strings.Contains(plan, "/vnodes=1/par=2") {
			t.Errorf("--vnodes %s --par %s: plan:\n%s", tc.vnodes, tc.par, plan)
		}
		if got := strings.Contains(plan, "skipped, more actors than vnodes: "+tc.skipped+"\n"); got != (tc.skipped != "") {
			t.Errorf("--vnodes %s --par %s: plan says skipped %v, want %q:\n%s", tc.vnodes, tc.par, got, tc.skipped, plan)
		}
		if got := strings.Contains(log.String(), "more actors than vnodes"); got != (tc.skipped != "") {
			t.Errorf("--vnodes %s --par %s: log says skipped %v, want %q:\n%s", tc.vnodes, tc.par, got, tc.skipped, log.String())
		}
	}
}

// TestRunRawCopy: with RawCopy, every cell's replay runs right after each of the
// cell's jobs, every table is copied raw and read scan-only --count times after
// the cells, and results.txt holds them, with the run's config, after the cells.
func TestRunRawCopy(t *testing.T) {
	cfg := fakeConfig(t, "1,10", 2)
	cfg.RawCopy = true
	runs := filepath.Join(t.TempDir(), "runs.log")
	t.Setenv(fakeLogEnv, runs)
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(runs)
	if err != nil {
		t.Fatal(err)
	}
	// Right after: after the job, or after its pair's two jobs when they ran at
	// once (a duet), before any other cell's job and the tables' baselines.
	order := strings.Fields(string(data))
	for i, bench := range order {
		cell, ok := strings.CutPrefix(bench, "^BenchmarkBackfill$/")
		if !ok {
			continue
		}
		j := slices.Index(order[i:], "^BenchmarkReplay$/"+cell)
		if j < 0 || j > 3 || slices.ContainsFunc(order[i+1:i+j], func(s string) bool { return !strings.Contains(s, "/^rows="+rowsOf(cell)+"$/") }) {
			t.Errorf("run %d, %s, is not followed by its replay:\n%s", i+1, bench, data)
		}
	}
	var cells, copies, scans, replays int
	for _, r := range readResults(t, rep.Dir) {
		switch {
		case strings.HasPrefix(string(r.Name), "Backfill/"):
			cells++
			continue
		case strings.HasPrefix(string(r.Name), "RawCopy/profile=mem/workload=narrow/rows="):
			copies++
		case strings.HasPrefix(string(r.Name), "ScanOnly/profile=mem/workload=narrow/rows="):
			scans++
		case strings.HasPrefix(string(r.Name), "Replay/profile=mem/workload=narrow/rows="):
			replays++
		}
		if r.GetConfig(contract.ConfigMachine) == "" {
			t.Errorf("%s has no machine config", r.Name)
		}
	}
	// 2 tables × persist off and on × 2 rounds; 2 tables × 2 rounds of copies and
	// of scans; a replay per cell and round.
	if cells != 8 || copies != 4 || scans != 4 || replays != 8 {
		t.Errorf("%d cell results, %d raw copies, %d scan-only, %d replays; want 8, 4, 4, 8", cells, copies, scans, replays)
	}
}

// TestRunExtraFailuresFailTheRun: a run after the cells that fails (here a raw
// copy) is recorded in failures.txt with its output and makes the run fail, while
// the cells' results and the copies that worked are kept.
func TestRunExtraFailuresFailTheRun(t *testing.T) {
	cfg := fakeConfig(t, "1,6", 1)
	cfg.RawCopy = true
	rep, err := Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "1 of 8 runs after the cells (raw copies, baselines, recoveries) failed") {
		t.Fatalf("err = %v, want the failed raw copy", err)
	}
	data, ferr := os.ReadFile(filepath.Join(rep.Dir, "failures.txt"))
	if ferr != nil {
		t.Fatal(ferr)
	}
	if got := string(data); !strings.Contains(got, "after the cells (round 1) BenchmarkRawCopy/profile=mem/workload=narrow/rows=6: exit status 2") ||
		!strings.Contains(got, "    panic: raw copy: short write") {
		t.Errorf("failures.txt:\n%s", got)
	}
	// 8 runs after the cells (raw copies and the baselines of both tables), of
	// which the one raw copy of rows=6 failed.
	if len(rep.Results) != 4 || len(rep.Extras) != 7 {
		t.Errorf("%d cell results and %d runs after the cells kept, want 4 and 7", len(rep.Results), len(rep.Extras))
	}
}

// TestRunRecoveries: the nightly's recovery cells run after the cells, --count
// times, into results.txt; with shards only the first shard runs them.
func TestRunRecoveries(t *testing.T) {
	cfg := fakeConfig(t, "100", 2)
	profiles, err := profile.NewSet(nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Recoveries = NightlyRecoveries(cfg.Matrix, profiles)
	if len(cfg.Recoveries) != 2 || cfg.Recoveries[0].Name() != "Recovery/profile=mem/workload=narrow/rows=100/crash=90%/persist=off/scan=merged/barrier=2500rows/par=2" {
		t.Fatalf("recoveries %+v", cfg.Recoveries)
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	recoveries := 0
	for _, r := range readResults(t, rep.Dir) {
		if strings.HasPrefix(string(r.Name), "Recovery/profile=mem/") {
			recoveries++
			if v, ok := r.Value("reemitted-rows"); !ok || v == 0 {
				t.Errorf("%s: reemitted-rows %v", r.Name, v)
			}
		}
	}
	if recoveries != 4 || len(rep.Extras) != 4 {
		t.Errorf("%d recovery results in results.txt, %d in the report; want 4 (2 cells × 2 rounds)", recoveries, len(rep.Extras))
	}
	cfg.Out = t.TempDir()
	cfg.Shard = runner.Shard{Index: 2, Count: 2}
	if rep, err := Run(context.Background(), cfg); err != nil || len(rep.Extras) != 0 {
		t.Errorf("shard 2/2 ran %d recoveries (err %v), want none", len(rep.Extras), err)
	}
}

// TestDuetHalvesTheRoom: a duet holds two jobs' tables at once, so a cell that
// fits the machine alone but not twice is skipped only if it runs in a duet: not
// back to back, and not without a persist partner.
func TestDuetHalvesTheRoom(t *testing.T) {
	if runner.DefaultPairing() != runner.Duet {
		t.Skip("this machine cannot run duets")
	}
	for _, tc := range []struct {
		pairing string
		persist []bool
		skipped bool
	}{{"sequential", []bool{false, true}, false}, {"duet", []bool{false, true}, true}, {"duet", []bool{true}, false}} {
		cfg := fakeConfig(t, "10000000", 1)
		cfg.DryRun, cfg.Pairing, cfg.Matrix.Persist = true, tc.pairing, tc.persist
		need := cost.Bytes(cfg.Matrix.Cells()[0])
		cfg.Room = func() testbed.Room { return testbed.Room{Memory: int64(float64(need) / 0.6)} }
		var out strings.Builder
		cfg.Stdout = &out
		_, err := Run(context.Background(), cfg)
		if got := err != nil && strings.Contains(err.Error(), "every cell is too large"); got != tc.skipped {
			t.Errorf("%s, persist %v: skipped %v, want %v (err %v)", tc.pairing, tc.persist, got, tc.skipped, err)
		}
	}
}

// rowsOf is the rows field of a cell's -test.bench pattern.
func rowsOf(pattern string) string {
	_, after, _ := strings.Cut(pattern, "/^rows=")
	rows, _, _ := strings.Cut(after, "$")
	return rows
}
