package runner

import (
	"slices"
	"testing"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/rates"
)

// TestExtraArgs: every extra runs its cell's flags from the contract with its own
// benchmark selected, and one raw copy runs per table; in a pass that warms up,
// every baseline warms up, and a recovery (which has no warm-up) does not.
func TestExtraArgs(t *testing.T) {
	cell := contract.Cell{Profile: "mem", Workload: "narrow", Rows: 1000, Scan: "merged", Barrier: rates.Cadence{Rows: 100}, Par: 2}
	other := cell
	other.Persist = true
	extras := RawCopiesOf([]contract.Cell{cell, other})
	if len(extras) != 1 {
		t.Fatalf("raw copies of one table: %v, want one", extras)
	}
	for _, tc := range []struct {
		extra  Extra
		bench  string
		extra2 []string // flags after the cell's
		warms  bool
	}{
		{extras[0], contract.BenchRegexp(contract.RawCopyBenchmark, cell.RawCopyName()), nil, true},
		{Baseline{cell, contract.ReplayBenchmark}, contract.BenchRegexp(contract.ReplayBenchmark, cell.Name()), nil, true},
		{Baseline{cell, contract.ScanOnlyBenchmark}, contract.BenchRegexp(contract.ScanOnlyBenchmark, cell.ScanOnlyName()), nil, true},
		{Recovery{cell, 90}, contract.BenchRegexp("Recovery", cell.RecoveryName("90%")), []string{"-" + contract.FlagCrash, "90%"}, false},
	} {
		want := selecting(cell.Args("", []string{"/p.json"}), tc.bench)
		want = append(want, tc.extra2...)
		if got := tc.extra.args([]string{"/p.json"}); !slices.Equal(got, want) {
			t.Errorf("%s: args %q, want %q", tc.extra.Name(), got, want)
		}
		if i := slices.Index(want, "-test.bench"); i < 0 || want[i+1] != tc.bench {
			t.Errorf("%s: %q selects no benchmark %q", tc.extra.Name(), want, tc.bench)
		}
		for _, pc := range []PassConfig{{}, {Warmup: true}} {
			warms := pc.Warmup && tc.warms
			if got := slices.Contains(warmArgs(pc.warmsExtra(tc.extra), tc.extra.args(nil)), "-"+contract.FlagWarmup); got != warms {
				t.Errorf("%s, in a pass with warm-up %v: -%s passed %v, want %v", tc.extra.Name(), pc.Warmup, contract.FlagWarmup, got, warms)
			}
		}
	}
}
