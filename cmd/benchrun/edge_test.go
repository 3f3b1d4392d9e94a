package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompareEdgeCases runs compare on the file pairs of testdata/edge (plain go
// test -bench output, as benchstat reads it) and checks each exit code and what
// the verdict says: a verdict over nothing, a lost cell, a failed head job or a
// flipped direction is never a pass, and what benchstat skips is skipped.
func TestCompareEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string // more flags
		exit int
		says string // in the headline (stdout's second line) or the error
		also string // anywhere in stdout: a note or a warning
	}{
		{name: "empty", exit: 2, says: "empty/base.txt: no benchmark results"},
		{name: "disjoint", exit: 2, says: "no cell and metric is on both sides (base has sec/op in 1 cells; head has sec/op in 1 cells)"},
		{name: "no-common-unit", exit: 2, says: "base has sec/op in 1 cells; head has rows/s in 1 cells"},
		{name: "bytes-only", exit: 2, says: "no (cell, metric) pair was judged: the results have units B/op, allocs/op, none with a threshold; judge them with --threshold B/op=3%,allocs/op=3%"},
		{name: "n1", exit: 3, says: "? INCONCLUSIVE: 0 regressed, 0 improved, 1 inconclusive of 1 judged",
			also: "benchstat warning: need >= 4 samples to detect a difference at alpha level 0.05"},
		{name: "n3", exit: 3, says: "? INCONCLUSIVE: 0 regressed, 0 improved, 1 inconclusive of 1 judged",
			also: "benchstat warning: need >= 6 samples for confidence interval at level 0.95"},
		{name: "slower-10pct", exit: 1, says: "✗ REGRESSION: 1 regressed, 0 improved, 0 inconclusive of 2 judged",
			also: "note: sec/op judged in place of steady-rows/s (its 3% threshold) in 2 cells: the results have no steady-state figures"},
		{name: "slower-10pct", args: []string{"--expected-regression", "the scan now verifies checksums (#123)"}, exit: 0,
			says: "✓ EXPECTED REGRESSION (the scan now verifies checksums (#123)): 1 regressed", also: "expected regression, let pass: the scan now verifies checksums"},
		{name: "slower-10pct", args: []string{"--thresholds-file", "testdata/edge/scan-15pct.json"}, exit: 0, says: "✓ no regression: 0 regressed"},
		{name: "faster-10pct", exit: 0, says: "✓ no regression: 0 regressed, 1 improved"},
		{name: "unchanged", exit: 0, says: "✓ no regression: 0 regressed, 0 improved, 0 inconclusive of 2 judged"},
		{name: "zeros-both", exit: 0, says: "✓ no regression: 0 regressed, 0 improved, 0 inconclusive of 2 judged"},
		{name: "rise-from-zero", exit: 1, says: "✗ REGRESSION: 1 regressed"},
		{name: "nan", exit: 2, says: "head.txt:14: BenchmarkScan-2: NaN ns/op is not a finite number"},
		{name: "inf", exit: 2, says: "head.txt:14: BenchmarkScan-2: +Inf ns/op is not a finite number"},
		{name: "negative", exit: 2, says: "head.txt:14: BenchmarkScan-2: -5 ns/op is negative"},
		{name: "lost-in-head", exit: 3, says: "judged cells on one side only, which no verdict can pass: Merge (sec/op) in base only"},
		{name: "lost-failed", exit: 1, says: "✗ REGRESSION, 1 cells failed in head"},
		{name: "procs-suffix", exit: 3, says: "Merge-8 (sec/op) in base only; Merge-4 (sec/op) in head only"},
		{name: "unknown-unit", exit: 0, says: "✓ no regression: 0 regressed, 0 improved, 0 inconclusive of 1 judged",
			also: `base.txt:5: unit "frobs/op" is not one this suite reports`},
		{name: "unit-flip", exit: 1, says: "✗ REGRESSION: 1 regressed",
			also: "note: job-allocs/op: a results file declares better=higher, the contract lower, which the verdict keeps"},
		{name: "log-noise", exit: 0, says: "✓ no regression: 0 regressed, 0 improved, 0 inconclusive of 1 judged",
			also: "head.txt:17: parsing iteration count: invalid syntax: not a benchfmt line"},
	} {
		t.Run(strings.Join(append([]string{tc.name}, tc.args...), " "), func(t *testing.T) {
			dir := filepath.Join("testdata", "edge", tc.name)
			args := append([]string{"compare", "--no-plots", "--out", t.TempDir()}, tc.args...)
			stdout, _, err := runArgs(append(args, filepath.Join(dir, "base.txt"), filepath.Join(dir, "head.txt"))...)
			lines := strings.SplitN(stdout, "\n", 3)
			said := fmt.Sprint(err)
			if len(lines) > 1 {
				said = lines[1] + "\n" + said
			}
			got := 0
			if err != nil {
				got = exitCode(err)
			}
			if got != tc.exit {
				t.Errorf("exit %d, want %d; said:\n%s", got, tc.exit, said)
			}
			if !strings.Contains(said, tc.says) {
				t.Errorf("said:\n%s\nwant it to contain %q", said, tc.says)
			}
			if !strings.Contains(stdout, tc.also) {
				t.Errorf("stdout:\n%s\nwant it to contain %q", stdout, tc.also)
			}
		})
	}
}
