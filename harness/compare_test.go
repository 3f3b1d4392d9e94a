package harness

import (
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"

	"github.com/backfill-bench/backfill-bench/bench"
)

// TestBenchstatParity checks that the grid's numbers are the ones `go tool
// benchstat` prints for the same files: medians, intervals, deltas and p-values,
// with several units, cells missing on either side and a sample of one.
func TestBenchstatParity(t *testing.T) {
	base, head := filepath.Join("testdata", "compare", "base.txt"), filepath.Join("testdata", "compare", "head.txt")
	out, err := exec.Command("go", "tool", "benchstat", "-format", "csv", "-ignore", CompareIgnore, base, head).Output()
	if err != nil {
		t.Fatalf("go tool benchstat: %v", err)
	}
	results, units, err := readResultFiles(base, head)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGrid(GridConfig{Row: ".fullname", Col: ".file", Ignore: CompareIgnore}, results, units)
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
	units := benchfmt.UnitMetadataMap{}
	for _, u := range bench.Units() {
		units[u.UnitMetadataKey] = &u
	}
	g, err := NewGrid(GridConfig{Row: ".fullname", Col: ".file@(base head)"}, results, units)
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
		want  string
	}{
		{"throughput drop beyond threshold", "rows/s", -0.10, Regression},
		{"throughput rise", "rows/s", +0.10, Improvement},
		{"throughput drop within threshold", "rows/s", -0.02, NoChange},
		{"write-amp rise", "write-amp", +0.05, Regression},
		{"write-amp fall", "write-amp", -0.05, Improvement},
		{"write-amp rise within threshold", "write-amp", +0.01, NoChange},
		{"barrier tail rise", "barrier-p99-sec", +0.30, Regression},
		{"barrier tail rise within threshold", "barrier-p99-sec", +0.07, NoChange},
		{"wall time rise", "sec/op", +0.10, Regression},
		{"no change", "rows/s", 0, NoChange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			g := synthetic(t, map[string][2][]float64{
				"cell=a|" + tc.unit: {sample(rng, 10, 100, 0.005), sample(rng, 10, 100*(1+tc.shift), 0.005)},
			})
			v, err := Judge(g, DefaultThresholds(), Holm, 0.05)
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
			v, err := Judge(synthetic(t, samples), DefaultThresholds(), method, 0.05)
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

func TestDirectionDefaults(t *testing.T) {
	none := benchfmt.UnitMetadataMap{}
	for unit, want := range map[string]int{
		"rows/s": 1, "MB/s": 1, "sec/op": -1, "barrier-p99-sec": -1, "write-amp": -1, "B/op": -1,
		"allocs/op": -1, "fs-wal-B/op": -1, "widgets": 0,
	} {
		if got := betterOf(none, unit); got != want {
			t.Errorf("betterOf(%s) = %d, want %d", unit, got, want)
		}
	}
	marked := benchfmt.UnitMetadataMap{}
	u := benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: "widgets", Key: "better"}, Value: "higher"}
	marked[u.UnitMetadataKey] = &u
	if betterOf(marked, "widgets") != 1 {
		t.Error("a Unit line's direction is not used")
	}
}

func TestAdjust(t *testing.T) {
	p := []float64{0.01, 0.04, 0.03, 0.005}
	for _, tc := range []struct {
		method string
		want   []float64
	}{
		// Holm: sorted 0.005 0.01 0.03 0.04 × 4 3 2 1 = 0.02 0.03 0.06 0.04 → running max.
		{Holm, []float64{0.03, 0.06, 0.06, 0.02}},
		// BH: sorted × 4/1 4/2 4/3 4/4 = 0.02 0.02 0.04 0.04 → running min from the top.
		{BH, []float64{0.02, 0.04, 0.04, 0.02}},
	} {
		got, err := Adjust(tc.method, p)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-12 {
				t.Errorf("%s: adjusted %v, want %v", tc.method, got, tc.want)
				break
			}
		}
	}
	if _, err := Adjust("bonferroni", p); err == nil {
		t.Error("unknown correction accepted")
	}
}

func TestThresholds(t *testing.T) {
	th := DefaultThresholds()
	if err := th.Set("rows/s=5%, ns/op=1, write-amp=0%"); err != nil {
		t.Fatal(err)
	}
	if th["rows/s"] != 0.05 || th["sec/op"] != 0.01 || th["barrier-p99-sec"] != 0.10 {
		t.Errorf("thresholds %v", th)
	}
	if _, ok := th["write-amp"]; ok {
		t.Error("write-amp=0% should drop the unit")
	}
	for _, bad := range []string{"rows/s", "rows/s=-1%", "rows/s=lots"} {
		if err := (Thresholds{}).Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
}

// tinyBench is the bench package of a throwaway module: it takes the flags of the
// contract and "runs" a cell by sleeping SLEEP.
const tinyBench = `package bench

import (
	"flag"
	"os"
	"strings"
	"testing"
	"time"
)

var dims = map[string]*string{}
var trace = flag.String("trace", "", "")
var _ = flag.String("profile-file", "", "")

func init() {
	for _, d := range []string{"profile", "workload", "rows", "persist", "scan", "barrier", "par"} {
		dims[d] = flag.String(d, "", "")
	}
}

func BenchmarkBackfill(b *testing.B) {
	var parts []string
	for _, d := range []string{"profile", "workload", "rows", "persist", "scan", "barrier", "par"} {
		parts = append(parts, d+"="+*dims[d])
	}
	b.Run(strings.Join(parts, "/"), func(b *testing.B) {
		start := time.Now()
		time.Sleep(SLEEP)
		took := time.Since(start)
		b.ReportMetric(float64(took.Nanoseconds()), "ns/op")
		b.ReportMetric(1000/took.Seconds(), "rows/s")
		os.WriteFile(*trace, []byte("{}\n"), 0o644)
	})
}
`

// TestCompareCommits builds two commits of a throwaway module whose benchmark is
// twice as slow in the second, and compares them end to end through git worktrees.
func TestCompareCommits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two modules")
	}
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	write("go.mod", "module tiny\n\ngo 1.26\n")
	write(".gitignore", "compare/\n")
	write("bench/bench_test.go", strings.Replace(tinyBench, "SLEEP", "20*time.Millisecond", 1))
	git("add", ".")
	git("commit", "-q", "-m", "fast")
	write("bench/bench_test.go", strings.Replace(tinyBench, "SLEEP", "40*time.Millisecond", 1))
	git("commit", "-q", "-am", "slow")

	m := QuickMatrix()
	m.Workloads, m.Persist = []string{"narrow"}, []bool{false}
	cfg := CompareConfig{
		Matrix: m, Count: 6, Confirm: 1, Thresholds: DefaultThresholds(), Correction: Holm, Alpha: 0.05,
		Src: repo, Stdout: &strings.Builder{}, CommandLine: []string{"benchrun", "compare", "HEAD~1", "HEAD"},
	}

	t.Run("slower head", func(t *testing.T) {
		cfg := cfg
		cfg.Base = "HEAD~1" // against the working tree, the slow commit
		v, err := Compare(t.Context(), cfg)
		if !errors.Is(err, ErrRegression) {
			t.Fatalf("err = %v, want a regression", err)
		}
		var units []string
		for _, f := range v.Findings {
			if f.Status == Regression {
				units = append(units, f.Unit)
				if f.Confirm == nil {
					t.Errorf("%s: regression without a confirmation sample", f.Unit)
				}
			}
		}
		if fmt.Sprint(units) != "[sec/op rows/s]" {
			t.Errorf("regressed units %v, want sec/op and rows/s", units)
		}
		dir := filepath.Join(repo, "compare", "HEAD-1..working-tree")
		for _, f := range []string{"base.txt", "head.txt", "base-confirm.txt", "head-confirm.txt", "benchstat.txt", "verdict.json", "report.md", "command.txt"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Error(err)
			}
		}
		if out := cfg.Stdout.(*strings.Builder).String(); !strings.Contains(out, "✗ REGRESSION") {
			t.Errorf("table:\n%s", out)
		}
		if out, _ := exec.Command("git", "-C", repo, "worktree", "list").Output(); strings.Count(string(out), "\n") != 1 {
			t.Errorf("worktrees left behind:\n%s", out)
		}
	})

	t.Run("same commit", func(t *testing.T) {
		// The fast commit under two names: an A/A run of two builds.
		git("tag", "fast", "main~1")
		cfg := cfg
		cfg.Base, cfg.Head, cfg.Out = "main~1", "fast", t.TempDir()
		v, err := Compare(t.Context(), cfg)
		if err != nil {
			t.Fatalf("A/A compare: %v\n%s", err, cfg.Stdout)
		}
		if v.Regression {
			t.Errorf("A/A verdict is a regression: %+v", v.Findings)
		}
	})

	t.Run("bad ref", func(t *testing.T) {
		cfg := cfg
		cfg.Base, cfg.Out = "--upload-pack=touch /tmp/pwned", t.TempDir()
		_, err := Compare(t.Context(), cfg)
		if err == nil || !strings.Contains(err.Error(), "neither a results file nor a commit") {
			t.Errorf("err = %v", err)
		}
	})
}
