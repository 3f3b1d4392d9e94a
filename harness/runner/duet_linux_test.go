package runner

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/sys/unix"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/gate"
	"github.com/backfill-bench/backfill-bench/harness/runner/cost"
	"github.com/backfill-bench/backfill-bench/harness/testbed"
)

// The test binary doubles as a fake bench binary when this variable is set; the
// name it is started by picks its part in a duet (see fakeDuetBench).
const fakeEnv = "BACKFILL_BENCH_FAKE_RUNNER"

func TestMain(m *testing.M) {
	if os.Getenv(fakeEnv) != "" {
		os.Exit(fakeDuetBench(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeDuetBench loads for 300 ms when started as "slow", fails before its gate as
// "crash", runs its job until killed as "long", and rejects -start-gate as "nogate", as
// a binary built before it. Its
// result reports when it was ready and when its gate opened (Unix seconds), and how
// many distinct CPU sets it ran on after a gate (it watches until it has seen two,
// for at most 10 s), its GOMAXPROCS, and how many warm-up jobs it ran (-warmup).
func fakeDuetBench(args []string) int {
	role := filepath.Base(os.Args[0])
	if role == "nogate" && slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "-"+contract.FlagStartGate) }) {
		fmt.Fprintln(os.Stderr, "flag provided but not defined: -"+contract.FlagStartGate)
		return 2
	}
	fs := flag.NewFlagSet("fake", flag.ContinueOnError)
	for _, name := range contract.TestingFlags {
		fs.String(name, "", "")
	}
	flags := contract.Register(fs, fakeMatrix())
	if err := fs.Parse(args); err != nil {
		return 2
	}
	m, err := flags.Matrix()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if fs.Lookup("test.bench").Value.String() == "^$" {
		return 0 // no benchmark, as the real binary
	}
	switch role {
	case "slow":
		time.Sleep(300 * time.Millisecond)
	case "crash":
		fmt.Fprintln(os.Stderr, "panic: the load failed")
		return 2
	}
	ready := float64(time.Now().UnixNano()) / 1e9
	if *flags.StartGate {
		if err := gate.AwaitStart(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	started := float64(time.Now().UnixNano()) / 1e9
	if role == "long" {
		time.Sleep(time.Minute) // until the timeout kills it
	}
	sets := map[string]bool{}
	for deadline := time.Now().Add(10 * time.Second); *flags.StartGate && len(sets) < 2 && time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		var set unix.CPUSet
		if unix.SchedGetaffinity(0, &set) == nil {
			sets[fmt.Sprint(set)] = true
		}
	}
	warmups := 0
	if *flags.Warmup {
		warmups = 1
	}
	fmt.Printf("BenchmarkBackfill/%s \t1\t1000 ns/op\t%.6f ready-sec\t%.6f go-sec\t%d cpu-sets\t%d procs\t%d warmups\nPASS\n", m.Cells()[0].Name(), ready, started, len(sets), runtime.GOMAXPROCS(0), warmups)
	return 0
}

func fakeMatrix() contract.Matrix {
	var m contract.Matrix
	for dim, v := range map[string]string{"profile": "mem", "workload": "narrow", "rows": "1", "persist": "off",
		"scan": "merged", "barrier": "100ms", "par": "1"} {
		if err := m.Set(dim, v); err != nil {
			panic(err)
		}
	}
	return m
}

// duetPass runs one round of the fake cell on two sides, the binaries named
// base and head (links to the test binary), under the pairing.
func duetPass(t *testing.T, base, head string, pairing Pairing) (*PassResult, string) {
	return duetPassTimeout(t, base, head, pairing, time.Minute)
}

func duetPassTimeout(t *testing.T, base, head string, pairing Pairing, timeout time.Duration) (*PassResult, string) {
	t.Helper()
	return fakePass(t, base, head, PassConfig{Pairing: pairing, Timeout: timeout})
}

// fakePass runs one round of the fake cell on two sides, the binaries named base
// and head, with cfg's pairing, timeout and warm-up.
func fakePass(t *testing.T, base, head string, cfg PassConfig) (*PassResult, string) {
	t.Helper()
	t.Setenv(fakeEnv, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var sides []Side
	for i, name := range []string{base, head} {
		bin := filepath.Join(dir, fmt.Sprint(i), name)
		if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(exe, bin); err != nil {
			t.Fatal(err)
		}
		sides = append(sides, Side{Label: []string{"base", "head"}[i], Binary: bin})
	}
	profiles, err := profile.NewSet(nil)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	cfg.Dir, cfg.Profiles, cfg.Machine = dir, profiles, testbed.Machine{Cores: 2}
	cfg.Logger = slog.New(slog.NewTextHandler(&log, nil))
	res, err := RunPass(context.Background(), cfg, sides, Plan(fakeMatrix().Cells(), 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	return res, log.String()
}

func metric(t *testing.T, res *PassResult, side int, unit string) float64 {
	t.Helper()
	if len(res.Results[side]) != 1 {
		t.Fatalf("side %d: %d results, want 1 (failures: %+v)", side, len(res.Results[side]), res.Failures)
	}
	v, ok := res.Results[side][0].Value(unit)
	if !ok {
		t.Fatalf("side %d: no %s", side, unit)
	}
	return v
}

// TestDuetStartsTogetherAndTradesCPUs: the gate opens for neither run before both
// are ready, each run meets both halves of the CPUs, and the results say how they
// ran.
func TestDuetStartsTogetherAndTradesCPUs(t *testing.T) {
	if err := testbed.PinSupported(); err != nil {
		t.Skip(err)
	}
	res, _ := duetPass(t, "fast", "slow", Duet)
	if fastGo, slowReady := metric(t, res, 0, "go-sec"), metric(t, res, 1, "ready-sec"); fastGo < slowReady {
		t.Errorf("the fast run started its job %.3f s before the slow one was ready", slowReady-fastGo)
	}
	for side := range 2 {
		if n := metric(t, res, side, "cpu-sets"); n != 2 {
			t.Errorf("side %d ran on %g CPU sets after its gate, want 2 (the halves traded)", side, n)
		}
		r := res.Results[side][0]
		if got := r.GetConfig(contract.ConfigPairing); got != string(Duet) {
			t.Errorf("side %d: config pairing %q, want duet", side, got)
		}
		if got, want := r.GetConfig(contract.ConfigGOMAXPROCS), fmt.Sprint(len(testbed.CPUs())/2); got != want {
			t.Errorf("side %d: config gomaxprocs %q, want %s", side, got, want)
		}
		if got, want := metric(t, res, side, "procs"), float64(len(testbed.CPUs())/2); got != want {
			t.Errorf("side %d ran with GOMAXPROCS %g, want %g", side, got, want)
		}
	}
}

// TestDuetPartnerFailsBeforeTheGate: a run that dies while loading leaves its
// partner to finish alone, and is a failure.
func TestDuetPartnerFailsBeforeTheGate(t *testing.T) {
	if err := testbed.PinSupported(); err != nil {
		t.Skip(err)
	}
	res, _ := duetPass(t, "crash", "fast", Duet)
	if len(res.Failures) != 1 || res.Failures[0].Side != "base" || !strings.Contains(res.Failures[0].Tail, "the load failed") {
		t.Errorf("failures %+v, want base's crash", res.Failures)
	}
	metric(t, res, 1, "go-sec")
}

// TestDuetPartnerRunsLong: a run that finished is kept when its partner then
// times out; it is judged by its own time, not the duet's.
func TestDuetPartnerRunsLong(t *testing.T) {
	if err := testbed.PinSupported(); err != nil {
		t.Skip(err)
	}
	res, _ := duetPassTimeout(t, "long", "fast", Duet, 3*time.Second)
	if len(res.Failures) != 1 || res.Failures[0].Side != "base" || !strings.Contains(res.Failures[0].Reason, "timeout") {
		t.Errorf("failures %+v, want base's timeout only", res.Failures)
	}
	metric(t, res, 1, "go-sec")
}

// TestDuetFallsBackForOldBinaries: a binary without the gate makes the pass run
// its pairs one after the other, and say so.
func TestDuetFallsBackForOldBinaries(t *testing.T) {
	res, log := duetPass(t, "fast", "nogate", Duet)
	if !strings.Contains(log, "has no -"+contract.FlagStartGate) || !strings.Contains(log, "side=head") {
		t.Errorf("log %q does not say head's binary has no gate", log)
	}
	for side := range 2 {
		if got := res.Results[side][0].GetConfig(contract.ConfigPairing); got != "" {
			t.Errorf("side %d: config pairing %q, want none", side, got)
		}
		if wait := metric(t, res, side, "go-sec") - metric(t, res, side, "ready-sec"); wait > 1 {
			t.Errorf("side %d waited %.3f s at a gate it was not given", side, wait)
		}
	}
}

func TestPaired(t *testing.T) {
	off := contract.Cell{Workload: "narrow", Rows: 1}
	on := off
	on.Persist = true
	other := contract.Cell{Workload: "bid", Rows: 1}
	for _, tc := range []struct {
		a, b Trial
		want bool
	}{
		{Trial{Round: 1, Cell: off, Side: 0}, Trial{Round: 1, Cell: off, Side: 1}, true},
		{Trial{Round: 2, Cell: off, Side: 1}, Trial{Round: 2, Cell: off, Side: 0}, true},
		{Trial{Round: 1, Cell: off, Side: 0}, Trial{Round: 2, Cell: off, Side: 1}, false},
		{Trial{Round: 1, Cell: off, Side: 0}, Trial{Round: 1, Cell: other, Side: 1}, false},
		{Trial{Round: 1, Cell: off}, Trial{Round: 1, Cell: on}, true},
		{Trial{Round: 1, Cell: on}, Trial{Round: 1, Cell: off}, true},
		{Trial{Round: 1, Cell: off}, Trial{Round: 1, Cell: other}, false},
		{Trial{Round: 1, Cell: off}, Trial{Round: 1, Cell: off}, false},
	} {
		if got := paired(tc.a, tc.b); got != tc.want {
			t.Errorf("paired(%+v, %+v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestWritePlanDuetEstimate: a plan of duets says so, and estimates a pair at
// duetShare of its two runs back to back; a cell without a partner runs alone.
func TestWritePlanDuetEstimate(t *testing.T) {
	if err := testbed.PinSupported(); err != nil {
		t.Skip(err)
	}
	set, err := profile.NewSet(nil)
	if err != nil {
		t.Fatal(err)
	}
	m := fakeMatrix()
	m.Rows = []int64{1_000_000}
	m.Persist = []bool{false, true}
	m.Workloads = []string{"narrow", "bid"}
	cells := m.Cells()
	alone := cells[0]
	alone.Rows = 2_000_000
	cells = append(cells, alone)
	trials := Plan(cells, 2, 1)
	p, _ := set.Get("mem")
	var sequential, duet float64
	for _, c := range cells {
		sequential += 2 * cost.Run(c, p)
	}
	duet = 2 * (duetShare*(cost.Run(cells[0], p)+cost.Run(cells[1], p)) +
		duetShare*(cost.Run(cells[2], p)+cost.Run(cells[3], p)) + cost.Run(alone, p))
	for _, tc := range []struct {
		pairing Pairing
		want    string
	}{
		{Sequential, fmt.Sprintf("runs, one process each, every round running every cell once; about %v", time.Duration(sequential*float64(time.Second)).Round(time.Second))},
		{Duet, fmt.Sprintf("runs, one process each, 4 pairs of them at once (duets), every round running every cell once; about %v", time.Duration(duet*float64(time.Second)).Round(time.Second))},
	} {
		var b bytes.Buffer
		if err := WritePlan(&b, set, []string{"mem"}, cells, trials, Shard{1, 1}, tc.pairing, false); err != nil {
			t.Fatal(err)
		}
		if first, _, _ := strings.Cut(b.String(), "\n"); !strings.Contains(first, tc.want) {
			t.Errorf("%s: plan says %q, want %q in it", tc.pairing, first, tc.want)
		}
	}
}

// TestWarmupReachesEveryJob: a pass that warms up runs every job's process with
// -warmup and says so in its results file; one that does not, neither.
func TestWarmupReachesEveryJob(t *testing.T) {
	for _, warm := range []bool{false, true} {
		t.Run(fmt.Sprint("warm=", warm), func(t *testing.T) {
			res, _ := fakePass(t, "fast", "fast", PassConfig{Pairing: Sequential, Timeout: time.Minute, Warmup: warm})
			for side := range 2 {
				want, config := 0.0, ""
				if warm {
					want, config = 1, "1 job"
				}
				if got := metric(t, res, side, "warmups"); got != want {
					t.Errorf("side %d ran %g warm-up jobs, want %g", side, got, want)
				}
				// In the results file, not only in memory: a name-level key
				// would never be written.
				var file bytes.Buffer
				if err := benchfmt.NewWriter(&file).Write(res.Results[side][0]); err != nil {
					t.Fatal(err)
				}
				rd := benchfmt.NewReader(&file, "results.txt")
				got := ""
				for rd.Scan() {
					if r, ok := rd.Result().(*benchfmt.Result); ok {
						got = r.GetConfig(contract.ConfigWarmup)
					}
				}
				if got != config {
					t.Errorf("side %d: the results file read back has warmup %q, want %q", side, got, config)
				}
			}
		})
	}
}
