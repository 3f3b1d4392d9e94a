package bench_test

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/bench"
	"github.com/backfill-bench/backfill-bench/bench/backfill"
	"github.com/backfill-bench/backfill-bench/bench/meterfs"
	"github.com/backfill-bench/backfill-bench/bench/pipeline"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/rates"
	"github.com/backfill-bench/backfill-bench/workloads"
)

// TestContractMatchesModel: the names the contract lists are the model's.
func TestContractMatchesModel(t *testing.T) {
	if !slices.Equal(contract.Scans, backfill.Scans) {
		t.Errorf("contract scans %v, the executor's %v", contract.Scans, backfill.Scans)
	}
	if contract.DefaultVnodes != storage.DefaultVnodes {
		t.Errorf("contract's default vnodes %d, the storage layer's %d", contract.DefaultVnodes, storage.DefaultVnodes)
	}
	if !slices.Equal(contract.Reads, backfill.Reads) {
		t.Errorf("contract read modes %v, the executor's %v", contract.Reads, backfill.Reads)
	}
	var cats []string
	for _, c := range meterfs.Categories() {
		cats = append(cats, c.String())
	}
	if !slices.Equal(contract.FSCategories, cats) {
		t.Errorf("contract fs categories %v, the meter's %v", contract.FSCategories, cats)
	}
	if rates.Pause != backfill.Paused {
		t.Errorf("contract's paused rate %d, the executor's %v", rates.Pause, backfill.Paused)
	}
	if contract.MaxPar != storage.DefaultVnodes {
		t.Errorf("contract allows par up to %d, the vnode count is %d", contract.MaxPar, storage.DefaultVnodes)
	}
}

// TestOutputParses writes the unit lines and a result line as the benchmark does and
// reads them back with benchfmt: every unit parses and keeps its direction.
func TestOutputParses(t *testing.T) {
	var buf bytes.Buffer
	if err := contract.WriteUnits(&buf); err != nil {
		t.Fatal(err)
	}
	res := &pipeline.Result{Wall: time.Second, SnapshotRows: 100, CPU: time.Millisecond}
	t0 := time.Now()
	for i := range contract.MinSteadyBarriers + 2 { // enough regular barriers for steady-state figures
		res.Epochs = append(res.Epochs, pipeline.EpochTrace{Injected: t0.Add(time.Duration(i) * time.Millisecond), Latency: time.Millisecond, SnapshotRows: 1, CPU: time.Duration(i) * time.Microsecond})
	}
	w := benchfmt.NewWriter(&buf)
	out := &benchfmt.Result{Name: benchfmt.Name("BenchmarkBackfill/" + contract.Cell{Profile: "mem", Workload: "narrow", Scan: "merged", Barrier: rates.Every(time.Second), Par: 1}.Name()), Iters: 1}
	metrics, steady := bench.Metrics(res)
	if !steady {
		t.Fatal("a job of 102 epochs has no steady-state figures")
	}
	for _, m := range metrics {
		out.Values = append(out.Values, benchfmt.Value{Value: m.Value, Unit: m.Unit})
	}
	if err := w.Write(out); err != nil {
		t.Fatal(err)
	}
	r := benchfmt.NewReader(&buf, "out.txt")
	var got *benchfmt.Result
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Errorf("syntax error: %v", rec)
		case *benchfmt.Result:
			got = rec.Clone()
		}
	}
	if got == nil {
		t.Fatal("no result read back")
	}
	units := r.Units()
	for _, v := range got.Values {
		if v.OrigUnit == "ns/op" || v.Unit == "sec/op" || v.Unit == contract.UnitBarriers {
			continue
		}
		if units.GetBetter(v.Unit) == 0 {
			t.Errorf("unit %s has no better= direction", v.Unit)
		}
	}
	if len(got.Values) != len(metrics) {
		t.Errorf("read %d values, wrote %d", len(got.Values), len(metrics))
	}
	if units.GetBetter("rows/s") != 1 || units.GetBetter("write-amp") != -1 {
		t.Error("rows/s should be better higher and write-amp better lower")
	}
}

func TestCanonicalWorkloads(t *testing.T) {
	m := contract.Matrix{Workloads: []string{"bid+sequential+default", "bid", "narrow+zipfian"}}
	if err := m.Canonicalize(workloads.Canonical); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Workloads, []string{"bid", "narrow+zipfian"}) {
		t.Errorf("canonical workloads %v", m.Workloads)
	}
	m.Workloads = []string{"nope"}
	if err := m.Canonicalize(workloads.Canonical); err == nil {
		t.Error("unknown workload accepted")
	}
}

// TestSplitUpdatesReportedWhenSome: split-updates is reported, as counted, only by a
// job that split some key-changing update across actors.
func TestSplitUpdatesReportedWhenSome(t *testing.T) {
	for _, tt := range []struct {
		split int64
		want  bool
	}{{0, false}, {7, true}} {
		res := &pipeline.Result{Wall: time.Second, SnapshotRows: 100, SplitUpdates: tt.split, WholeUpdates: 3}
		metrics, _ := bench.Metrics(res)
		got := slices.IndexFunc(metrics, func(m bench.Metric) bool { return m.Unit == contract.UnitSplitUpdates })
		if (got >= 0) != tt.want || got >= 0 && metrics[got].Value != float64(tt.split) {
			t.Errorf("%d split updates: metrics %v, want split-updates reported: %v", tt.split, metrics, tt.want)
		}
		if !contract.KnownUnit(contract.UnitSplitUpdates) {
			t.Errorf("%s is not a unit the contract declares", contract.UnitSplitUpdates)
		}
	}
}
