package judge

import (
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"

	"github.com/backfill-bench/backfill-bench/contract"
)

// TestBenchstatParity checks that the grid's numbers are the ones `go tool
// benchstat` prints for the same files: medians, intervals, deltas and p-values,
// with several units, cells missing on either side and a sample of one.
func TestBenchstatParity(t *testing.T) {
	base, head := filepath.Join("testdata", "compare", "base.txt"), filepath.Join("testdata", "compare", "head.txt")
	out, err := exec.Command("go", "tool", "benchstat", "-format", "csv", "-ignore", contract.CompareIgnore, base, head).Output()
	if err != nil {
		t.Fatalf("go tool benchstat: %v", err)
	}
	results, units, err := contract.ReadFiles(base, head)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGrid(GridConfig{Row: ".fullname", Col: ".file", Ignore: contract.CompareIgnore}, results, units)
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string]*GridTable{}
	for _, tb := range g.Tables {
		tables[tb.Unit] = tb
	}

	r := csv.NewReader(strings.NewReader(string(out)))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var table *GridTable
	checked := 0
	for _, rec := range recs {
		switch {
		case len(rec) >= 3 && rec[0] == "" && rec[2] == "CI": // ",unit,CI,unit,CI,vs base,P"
			table = tables[rec[1]]
			if table == nil {
				t.Fatalf("benchstat has unit %s, the grid does not", rec[1])
			}
		case table == nil || len(rec) < 3 || rec[0] == "" || rec[0] == "geomean":
		default:
			row := findRow(table, rec[0])
			if row == nil {
				t.Errorf("%s %s: not in the grid", table.Unit, rec[0])
				continue
			}
			for i, col := range table.Cols {
				if 1+2*i >= len(rec) || rec[1+2*i] == "" {
					if table.Cells[GridKey{*row, col}] != nil {
						t.Errorf("%s %s %s: benchstat has no value, the grid has", table.Unit, rec[0], col)
					}
					continue
				}
				cell := table.Cells[GridKey{*row, col}]
				want, _ := strconv.ParseFloat(rec[1+2*i], 64)
				if cell == nil || math.Abs(cell.Summary.Center-want) > 1e-9*math.Abs(want) {
					t.Errorf("%s %s %s: median %v, benchstat %v", table.Unit, rec[0], col, cell, want)
					continue
				}
				if got := cell.Summary.PctRangeString(); got != rec[2+2*i] {
					t.Errorf("%s %s %s: CI %s, benchstat %s", table.Unit, rec[0], col, got, rec[2+2*i])
				}
				checked++
			}
			if len(rec) == 7 && rec[5] != "" {
				cell := table.Cells[GridKey{*row, table.Cols[1]}]
				if got := cell.Cmp.FormatDelta(cell.Base.Summary.Center, cell.Summary.Center); got != rec[5] {
					t.Errorf("%s %s: delta %s, benchstat %s", table.Unit, rec[0], got, rec[5])
				}
				if got := cell.Cmp.String(); got != rec[6] {
					t.Errorf("%s %s: %s, benchstat %s", table.Unit, rec[0], got, rec[6])
				}
				checked++
			}
		}
	}
	if checked < 30 {
		t.Errorf("checked only %d values against benchstat", checked)
	}
}

func findRow(t *GridTable, name string) *benchproc.Key {
	for _, r := range t.Rows {
		if r.StringValues() == name {
			return &r
		}
	}
	return nil
}

// sample is n values around center with relative noise.
func sample(rng *rand.Rand, n int, center, noise float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = center * (1 + noise*rng.NormFloat64())
	}
	return out
}

// synthetic builds a grid of base and head samples: per cell, every judged unit.
func synthetic(t *testing.T, samples map[string][2][]float64) *Grid {
	t.Helper()
	var results []*benchfmt.Result
	for key, sides := range samples {
		cell, unit, _ := strings.Cut(key, "|")
		for i, file := range []string{"base", "head"} {
			for _, v := range sides[i] {
				results = append(results, &benchfmt.Result{
					Name: benchfmt.Name("Backfill/" + cell), Iters: 1,
					Config: []benchfmt.Config{{Key: ".file", Value: []byte(file)}},
					Values: []benchfmt.Value{{Value: v, Unit: unit}},
				})
			}
		}
	}
	g, err := NewGrid(GridConfig{Row: ".fullname", Col: ".file@(base head)"}, results, contract.UnitMap())
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestJudgeKnownShifts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		unit  string
		shift float64 // relative change of head's center
		want  Status
	}{
		{"throughput drop beyond threshold", "rows/s", -0.10, Regression},
		{"throughput rise", "rows/s", +0.10, Improvement},
		{"throughput drop within threshold", "rows/s", -0.02, NoRegression},
		{"write-amp rise", "write-amp", +0.05, Regression},
		{"write-amp fall", "write-amp", -0.05, Improvement},
		{"write-amp rise within threshold", "write-amp", +0.01, NoRegression},
		{"barrier tail rise", "barrier-p99-sec", +0.30, Regression},
		{"barrier tail rise within threshold", "barrier-p99-sec", +0.07, NoRegression},
		{"wall time rise", "sec/op", +0.10, Regression},
		{"no change", "rows/s", 0, NoRegression},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			g := synthetic(t, map[string][2][]float64{
				"cell=a|" + tc.unit: {sample(rng, 10, 100, 0.005), sample(rng, 10, 100*(1+tc.shift), 0.005)},
			})
			v, err := Judge(g, Options{Thresholds: wholeJobThresholds(), Correction: Holm, Alpha: 0.05})
			if err != nil {
				t.Fatal(err)
			}
			if len(v.Findings) != 1 || v.Findings[0].Status != tc.want {
				t.Fatalf("findings %+v, want one %s", v.Findings, tc.want)
			}
			if v.Regression != (tc.want == Regression) {
				t.Errorf("verdict regression = %v", v.Regression)
			}
		})
	}
}

// TestJudgeFalseAlarms judges many cells of pure noise (A/A) over many seeds and
// checks the corrected false-alarm rate stays near alpha or below.
func TestJudgeFalseAlarms(t *testing.T) {
	const seeds, cells = 200, 16
	for _, method := range []string{Holm, BH} {
		alarms := 0
		for seed := range uint64(seeds) {
			rng := rand.New(rand.NewPCG(seed, 7))
			samples := map[string][2][]float64{}
			for c := range cells {
				for _, unit := range []string{"rows/s", "sec/op", "barrier-p99-sec", "write-amp"} {
					// Noise of 5 %: wider than the thresholds, so only the test guards.
					samples[fmt.Sprintf("cell=%d|%s", c, unit)] = [2][]float64{sample(rng, 10, 100, 0.05), sample(rng, 10, 100, 0.05)}
				}
			}
			v, err := Judge(synthetic(t, samples), Options{Thresholds: wholeJobThresholds(), Correction: method, Alpha: 0.05})
			if err != nil {
				t.Fatal(err)
			}
			if v.Regression {
				alarms++
			}
		}
		rate := float64(alarms) / seeds
		t.Logf("%s: A/A runs of %d cells × 4 metrics with a false regression: %d of %d (%.1f%%)", method, cells, alarms, seeds, 100*rate)
		// The family-wise rate is at most alpha = 5 % for Holm (BH is at most that
		// under the global null); allow for the binomial spread of 200 seeds.
		if rate > 0.09 {
			t.Errorf("%s: false-alarm rate %.3f, want ≤ 0.05 (+ spread)", method, rate)
		}
	}
}

func TestThresholds(t *testing.T) {
	th := wholeJobThresholds()
	if err := th.Set("rows/s=5%, ns/op=1, write-amp=0%"); err != nil {
		t.Fatal(err)
	}
	if th["rows/s"] != 0.05 || th["sec/op"] != 0.01 || th["barrier-p50-sec"] != 0.10 {
		t.Errorf("thresholds %v", th)
	}
	if _, ok := th["write-amp"]; ok {
		t.Error("write-amp=0% should drop the unit")
	}
	for _, bad := range []string{"rows/s", "rows/s=-1%", "rows/s=lots", "nosuchunit=5%", "rows/=3%"} {
		if err := (Thresholds{}).Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
}

// TestMixedMachinesAgreeWithBenchstat: files from two machines (their machine
// config lines differ) are split into separate tables by benchstat, which then
// compares nothing; the judge compares nothing either and says why.
func TestMixedMachinesAgreeWithBenchstat(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "compare", "head.txt"))
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other-machine.txt")
	os.WriteFile(other, []byte(strings.Replace(string(data), "machine: abc123", "machine: fff999", 1)), 0o644)
	base := filepath.Join("testdata", "compare", "base.txt")

	out, err := exec.Command("go", "tool", "benchstat", "-format", "csv", "-ignore", contract.CompareIgnore, base, other).Output()
	if err != nil {
		t.Fatalf("go tool benchstat: %v", err)
	}
	if strings.Contains(string(out), "vs base") {
		t.Fatalf("benchstat compared results of two machines:\n%s", out)
	}
	baseRes, units, err := contract.ReadFiles(base)
	if err != nil {
		t.Fatal(err)
	}
	headRes, _, err := contract.ReadFiles(other)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Compare(Side{Results: baseRes}, Side{Results: headRes}, units, Options{Thresholds: wholeJobThresholds(), Correction: Holm, Alpha: 0.05})
	if err == nil || !strings.Contains(err.Error(), "machine: abc123 in base, fff999 in head") || !strings.Contains(err.Error(), "different machines") {
		t.Errorf("err = %v, want the machines named", err)
	}

	// Asked to, the judge compares across machines and says so.
	v, _, err := Compare(Side{Results: baseRes}, Side{Results: headRes}, units, Options{Thresholds: DefaultThresholds(), Correction: Holm, Alpha: 0.05, AcrossMachines: true})
	if err != nil || len(v.Findings) == 0 || !strings.Contains(strings.Join(v.Notes, "\n"), "base abc123, head fff999") {
		t.Errorf("--across-machines: err %v, %d findings, notes %q", err, len(v.Findings), v.Notes)
	}

	// The same files from one machine: benchstat compares them, and so does the judge.
	out, err = exec.Command("go", "tool", "benchstat", "-format", "csv", "-ignore", contract.CompareIgnore, base, filepath.Join("testdata", "compare", "head.txt")).Output()
	if err != nil || !strings.Contains(string(out), "vs base") {
		t.Fatalf("benchstat on one machine: %v\n%s", err, out)
	}
	headRes, _, _ = contract.ReadFiles(filepath.Join("testdata", "compare", "head.txt"))
	v, _, err = Compare(Side{Results: baseRes}, Side{Results: headRes}, units, Options{Thresholds: wholeJobThresholds(), Correction: Holm, Alpha: 0.05})
	if err != nil || len(v.Findings) == 0 {
		t.Errorf("one machine: err %v, %d findings", err, len(v.Findings))
	}
}

func TestStatusText(t *testing.T) {
	for s := NotJudged; s <= Unconfirmed; s++ {
		b, _ := s.MarshalText()
		var back Status
		if err := back.UnmarshalText(b); err != nil || back != s {
			t.Errorf("%v: round trip gives %v, %v", s, back, err)
		}
	}
	var s Status
	if err := s.UnmarshalText([]byte("maybe")); err == nil {
		t.Error("unknown status accepted")
	}
}

// wholeJobThresholds are the default thresholds plus whole-job throughput and wall
// time, which the fixtures and synthetic data here report.
func wholeJobThresholds() Thresholds {
	th := DefaultThresholds()
	th.Set("rows/s=3%,sec/op=3%,barrier-p99-sec=10%")
	return th
}

// TestDefaultThresholdsMatchTidyUnits: every default threshold names a unit as
// benchfmt reads it back, or it would judge nothing.
func TestDefaultThresholdsMatchTidyUnits(t *testing.T) {
	for unit := range DefaultThresholds() {
		if contract.Tidy(unit) != unit {
			t.Errorf("threshold on %q, but results carry %q", unit, contract.Tidy(unit))
		}
	}
	if _, ok := DefaultThresholds()["steady-cpu-sec/row"]; !ok {
		t.Error("steady CPU per row is not judged")
	}
}

// TestOneSidedMetric: a metric only one side has is named with its cell, and the
// rest is compared.
func TestOneSidedMetric(t *testing.T) {
	mk := func(vals ...benchfmt.Value) *benchfmt.Result {
		return &benchfmt.Result{Name: benchfmt.Name("Backfill/profile=mem/par=2-2"), Iters: 1, Values: vals}
	}
	var base, head Side
	for range 6 {
		base.Results = append(base.Results, mk(benchfmt.Value{Value: 100, Unit: "rows/s"}, benchfmt.Value{Value: 1.1, Unit: "write-amp"}))
		head.Results = append(head.Results, mk(benchfmt.Value{Value: 100, Unit: "rows/s"}))
	}
	v, _, err := Compare(base, head, contract.UnitMap(), Options{Thresholds: wholeJobThresholds(), Correction: Holm, Alpha: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Findings) != 1 || v.Findings[0].Unit != "rows/s" {
		t.Errorf("findings %+v, want rows/s compared", v.Findings)
	}
	if fmt.Sprint(v.OnlyInBase) != "[profile=mem/par=2 (write-amp)]" || len(v.OnlyInHead) != 0 {
		t.Errorf("only in base %q, only in head %q", v.OnlyInBase, v.OnlyInHead)
	}
}

// TestMedianKeepsOrder: Median leaves its values in their order, which pairs them
// by round (benchmath sorts a sample in place).
func TestMedianKeepsOrder(t *testing.T) {
	values := []float64{3, 1, 2}
	if m := Median(values); m != 2 || !slices.Equal(values, []float64{3, 1, 2}) {
		t.Errorf("Median = %v, values after %v; want 2 and [3 1 2]", m, values)
	}
}
