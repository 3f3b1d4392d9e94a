package judge

import (
	"encoding/csv"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/perf/benchmath"

	"github.com/backfill-bench/backfill-bench/contract"
)

// TestVerdictMatchesBenchstat runs benchstat and the verdict on golang/perf's own
// benchstat test data (testdata/benchstat) and checks that every row benchstat
// compares is a finding with the same medians, intervals, change and p-value, as
// benchstat prints them. A pair of files is base and head; a file of one run
// noted before and after is split by its note, as `benchstat -col note` does.
func TestVerdictMatchesBenchstat(t *testing.T) {
	dir := filepath.Join("testdata", "benchstat")
	rows, mismatches := 0, 0
	for _, tc := range [][]string{
		{"old.txt", "new.txt"}, {"crc-old.txt", "crc-new.txt"},
		{"smallSample.txt"}, {"units.txt"}, {"zero.txt"}, {"issue19565.txt"}, {"issue19634.txt"},
	} {
		t.Run(tc[0], func(t *testing.T) {
			var paths []string
			args := []string{"tool", "benchstat", "-format", "csv"}
			for _, f := range tc {
				paths = append(paths, filepath.Join(dir, f))
			}
			if len(tc) == 1 {
				args = append(args, "-col", "note")
			} else {
				args = append(args, "-ignore", "note") // the crc files note their hardware
			}
			out, err := exec.Command("go", append(args, paths...)...).Output()
			if err != nil {
				t.Fatalf("go tool benchstat: %v", err)
			}
			read, err := contract.ReadLenient(paths...)
			if err != nil {
				t.Fatal(err)
			}
			var base, head Side
			for _, r := range read.Results {
				side := &head
				if file, _ := r.Pos(); len(tc) == 2 && file == paths[0] || len(tc) == 1 && r.GetConfig("note") == "before" {
					side = &base
				}
				r.SetConfig("note", "") // the column, not a configuration
				side.Results = append(side.Results, r)
			}
			v, _, err := Compare(base, head, read.Units, Options{Thresholds: Thresholds{}, Correction: Holm, Alpha: 0.05})
			if err != nil {
				t.Fatal(err)
			}
			r, n := checkAgainstBenchstat(t, v, string(out))
			t.Logf("%d rows, %d mismatches", r, n)
			rows += r
			mismatches += n
		})
	}
	t.Logf("%d rows compared with benchstat, %d mismatches", rows, mismatches)
	if rows < 60 {
		t.Errorf("only %d rows compared: the test data or its parsing changed", rows)
	}
}

// checkAgainstBenchstat checks benchstat's CSV rows against the verdict's
// findings and returns the rows compared and the mismatches.
func checkAgainstBenchstat(t *testing.T, v *Verdict, out string) (rows, mismatches int) {
	t.Helper()
	r := csv.NewReader(strings.NewReader(out))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	byCell := map[[2]string]Finding{}
	for _, f := range v.Findings {
		byCell[[2]string{f.Cell, f.Unit}] = f
	}
	unit := ""
	for _, rec := range recs {
		switch {
		case len(rec) >= 3 && rec[0] == "" && rec[2] == "CI":
			unit = rec[1]
			continue
		case unit == "" || len(rec) < 7 || rec[0] == "" || rec[0] == "geomean" || rec[5] == "":
			continue
		}
		rows++
		f, ok := byCell[[2]string{contract.Label(rec[0]), unit}]
		if !ok {
			f, ok = byCell[[2]string{rec[0], unit}]
		}
		if !ok {
			t.Errorf("%s %s: benchstat compares it, the verdict has no finding", unit, rec[0])
			mismatches++
			continue
		}
		cmp := benchmath.Comparison{P: f.P, N1: f.Base.N, N2: f.Head.N, Alpha: 0.05}
		if f.Exact {
			// benchstat gives an exact unit p = 0 as a placeholder and prints none; the
			// verdict's p of an exact unit is 1 when equal (no change), 0 when not, or
			// its test's when the values varied.
			cmp.P = 0
		}
		got := []string{fmtCenter(f.Base.Median), f.Base.Summary().PctRangeString(), fmtCenter(f.Head.Median), f.Head.Summary().PctRangeString(), verdictDelta(f), cmp.String()}
		want := rec[1:7]
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s %s: verdict %q, benchstat %q", unit, rec[0], got, want)
			mismatches++
		}
	}
	return rows, mismatches
}

// fmtCenter is a center as benchstat's CSV writes it.
func fmtCenter(x float64) string { return fmt.Sprint(x) }

// verdictDelta is the finding's change in benchstat's notation: "~" when not
// significant at 0.05 (never for an exact unit), else the change of the verdict.
func verdictDelta(f Finding) string {
	switch {
	case f.P > 0.05 && !f.Exact:
		return "~"
	case f.Base.Median == f.Head.Median:
		return "0.00%"
	case f.Base.Median == 0:
		return "?"
	}
	return fmt.Sprintf("%+.2f%%", 100*f.Delta)
}
