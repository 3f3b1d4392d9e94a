package why

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/render"
	"golang.org/x/perf/benchfmt"
)

// hotBench builds pprofdiff's test program as a bench binary whose main.hot runs
// rounds times: it takes a cell's arguments and writes the profiles asked for.
func hotBench(t *testing.T, rounds string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bench.test")
	out, err := exec.Command("go", "build", "-o", bin, "-ldflags", "-X main.hotRounds="+rounds, "../pprofdiff/testdata/hot").CombinedOutput()
	if err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// TestExplainRegression: a confirmed regression in a cell's throughput and
// allocations gets profiled on both sides; the head's slowed function tops the CPU
// diff, the allocations diff is there, the profiles stay in the directory, and
// report.md shows the functions and the pprof command.
func TestExplainRegression(t *testing.T) {
	const cell = "profile=mem/workload=narrow/rows=1000/persist=on/scan=merged/barrier=100rows/par=2"
	v := &judge.Verdict{Base: "main", Head: "slow", Regression: true, Findings: []judge.Finding{
		{Cell: cell, Unit: "steady-rows/s", Better: 1, Status: judge.Regression},
		{Cell: cell, Unit: "job-allocs/op", Better: -1, Status: judge.Regression},
		{Cell: "profile=mem/workload=bid/rows=1000/persist=on/scan=merged/barrier=100rows/par=2", Unit: "steady-rows/s", Better: 1, Status: judge.NoRegression},
	}}
	dir := t.TempDir()
	sides := [2]Side{{"base", hotBench(t, "1")}, {"head", hotBench(t, "6")}}
	v.Why = Profile(context.Background(), dir, sides, nil, time.Minute, v)
	if len(v.Why) != 1 {
		t.Fatalf("%d cells explained, want the one that regressed: %+v", len(v.Why), v.Why)
	}
	w := v.Why[0]
	if w.Error != "" {
		t.Fatal(w.Error)
	}
	if w.CPU == nil || len(w.CPU.Flat) == 0 || w.CPU.Flat[0].Name != "main.hot" {
		t.Errorf("CPU diff %+v, want main.hot on top", w.CPU)
	}
	if w.Heap == nil || w.Heap.HeadTotal <= w.Heap.BaseTotal {
		t.Errorf("heap diff %+v, want the head's extra allocations", w.Heap)
	}
	for _, p := range w.Profiles {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Error(err)
		}
	}
	var md bytes.Buffer
	render.WriteReport(&md, v, "benchrun compare main slow", "fixture", nil)
	for _, want := range []string{"### Why `" + cell + "` regressed", "| `main.hot` |", "go tool pprof -diff_base profiles/base-"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md.String())
		}
	}

	// A binary that cannot profile the cell leaves a reason, not a failed compare.
	v.Why = Profile(context.Background(), t.TempDir(), [2]Side{{"base", "/nonexistent"}, {"head", "/nonexistent"}}, nil, time.Minute, v)
	if len(v.Why) != 1 || v.Why[0].Error == "" {
		t.Errorf("explain with a missing binary: %+v, want the cell with an error", v.Why)
	}
}

// TestWhyShowsBytesByCategory: a profiled regression carries each side's median
// bytes per category, and report.md shows them beside the functions.
func TestWhyShowsBytesByCategory(t *testing.T) {
	const cell = "profile=mem/workload=narrow/rows=1000/persist=on/scan=merged/barrier=100rows/par=2"
	var base, head judge.Side
	for r := range 6 {
		for i, side := range []*judge.Side{&base, &head} {
			wal, compaction := 1000.0+float64(r), 0.0 // the head writes twice the WAL and compacts
			if i == 1 {
				wal, compaction = 2*wal, 4096
			}
			side.Results = append(side.Results, &benchfmt.Result{Name: benchfmt.Name(contract.BenchmarkName + "/" + cell + "-2"), Iters: 1,
				Values: []benchfmt.Value{
					{Value: 900, Unit: contract.UnitLogicalPerOp},
					{Value: wal, Unit: contract.FSUnit("wal")},
					{Value: 500, Unit: contract.FSUnit("flush")},
					{Value: compaction, Unit: contract.FSUnit("compaction")},
					{Value: 0, Unit: contract.FSUnit("manifest")}, // written by neither: left out
					{Value: 1e6, Unit: contract.UnitSteadyRows},
				}})
			side.Rounds = append(side.Rounds, r)
		}
	}
	v, _, err := judge.Compare(base, head, contract.UnitMap(), judge.Options{Thresholds: judge.DefaultThresholds(), Correction: judge.Holm, Alpha: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	v.Why = Bytes(v, []judge.Why{{Cell: cell, Error: "not profiled in this test"}})
	zero, double := 0.0, 1.0
	want := []judge.ByteChange{
		{Unit: contract.UnitLogicalPerOp, Base: 900, Head: 900, Delta: &zero},
		{Unit: contract.FSUnit("wal"), Base: 1002.5, Head: 2005, Delta: &double},
		{Unit: contract.FSUnit("flush"), Base: 500, Head: 500, Delta: &zero},
		{Unit: contract.FSUnit("compaction"), Base: 0, Head: 4096},
	}
	got := v.Why[0].Bytes
	if !slices.EqualFunc(got, want, func(a, b judge.ByteChange) bool {
		return a.Unit == b.Unit && a.Base == b.Base && a.Head == b.Head && (a.Delta == nil) == (b.Delta == nil) && (a.Delta == nil || *a.Delta == *b.Delta)
	}) {
		t.Errorf("bytes %+v, want %+v", got, want)
	}
	var md bytes.Buffer
	render.WriteReport(&md, v, "benchrun compare main slow", "fixture", nil)
	for _, want := range []string{"| fs-wal-B/op | 1002.5B | 1.958KiB | +100.00% |", "| fs-compaction-B/op | 0.000B | 4.000KiB | new |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md.String())
		}
	}
}
