package render

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/judge"
)

var update = flag.Bool("update", false, "rewrite golden files")

// checkGolden compares got with testdata/name (rewritten with -update).
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden := filepath.Join("testdata", name)
	if *update {
		os.WriteFile(golden, []byte(got), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\n%s", golden, got)
	}
}

func TestReportGolden(t *testing.T) {
	fixture := filepath.Join("..", "judge", "testdata", "compare")
	base, units, err := contract.ReadFiles(filepath.Join(fixture, "base.txt"))
	if err != nil {
		t.Fatal(err)
	}
	head, _, err := contract.ReadFiles(filepath.Join(fixture, "head.txt"))
	if err != nil {
		t.Fatal(err)
	}
	th := judge.DefaultThresholds()
	th.Set("rows/s=3%,sec/op=3%,barrier-p99-sec=10%") // the fixture has whole-job figures only
	v, _, err := judge.Compare(judge.Side{Results: base}, judge.Side{Results: head}, units, judge.Options{Thresholds: th, Correction: judge.Holm, Alpha: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	v.Base, v.Head = "main", "working-tree"
	var buf bytes.Buffer
	const machine = "`0123456789ab`, Fixture CPU, 2 cores, linux/amd64"
	WriteReport(&buf, v, "benchrun compare main", machine, []string{"deltas", "variants"})
	checkGolden(t, "report.golden.md", buf.String())
	// A matrix of a thousand judged pairs still fits in a GitHub comment.
	big := *v
	for len(big.Findings) < 1000 {
		big.Findings = append(big.Findings, v.Findings...)
	}
	buf.Reset()
	WriteReport(&buf, &big, "benchrun compare main", machine, nil)
	if n := len([]rune(buf.String())); n > 60000 || !strings.Contains(buf.String(), "more rows in verdict.json") {
		t.Errorf("report of %d findings is %d characters; want < 60000 and a pointer to verdict.json", len(big.Findings), n)
	}
}

// summaryOf renders the run summary of a results file, unpaired.
func summaryOf(t *testing.T, path string) string {
	t.Helper()
	results, units, err := contract.ReadFiles(path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := SummaryGrid(results, nil, units)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteSummary(&buf, g); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestSummaryGolden(t *testing.T) {
	checkGolden(t, "summary.golden.txt", summaryOf(t, filepath.Join("..", "testdata", "plots", "run", "results.txt")))
}

// TestSummaryOfTwoProfiles: results of two profiles carry different config lines
// (benchstat makes a table per configuration), and each cell group shows only the
// metrics of its own profile, not a row of dashes per other profile's table.
func TestSummaryOfTwoProfiles(t *testing.T) {
	var in strings.Builder
	for _, p := range []string{"mem", "gp3"} {
		fmt.Fprintf(&in, "profile: %s v1\n", p)
		for _, persist := range []string{"off", "on"} {
			for i := range 3 {
				fmt.Fprintf(&in, "BenchmarkBackfill/profile=%s/workload=narrow/rows=1000/persist=%s/scan=merged/barrier=100ms/par=2-2 1 %d ns/op\n", p, persist, 1000+i)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "two.txt")
	if err := os.WriteFile(path, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := summaryOf(t, path)
	if n := strings.Count(out, "sec/op"); n != 2 {
		t.Errorf("sec/op appears %d times, want once per profile:\n%s", n, out)
	}
	if strings.Contains(out, "—") {
		t.Errorf("a cell group shows another profile's empty rows:\n%s", out)
	}
}

// TestPlotScale: results of three sizes and their baselines draw the scale plot; a
// single size draws nothing.
func TestPlotScale(t *testing.T) {
	var in strings.Builder
	for _, rows := range []int{1000, 10000, 100000} {
		for _, persist := range []string{"off", "on"} {
			fmt.Fprintf(&in, "BenchmarkBackfill/profile=mem/workload=narrow/rows=%d/persist=%s/scan=merged/barrier=100rows/par=2-2 1 1000 ns/op %d rows/s 1.2 write-amp 0.01 state/mv-bytes\n", rows, persist, 1000000-rows)
		}
		fmt.Fprintf(&in, "BenchmarkRawCopy/profile=mem/workload=narrow/rows=%d-2 1 1000 ns/op 3000000 rows/s\n", rows)
		fmt.Fprintf(&in, "BenchmarkScanOnly/profile=mem/workload=narrow/rows=%d/scan=merged/par=2-2 1 1000 ns/op 5000000 rows/s\n", rows)
		fmt.Fprintf(&in, "BenchmarkReplay/profile=mem/workload=narrow/rows=%d/persist=on/scan=merged/barrier=100rows/par=2-2 1 1000 ns/op 2000000 rows/s\n", rows)
	}
	path := filepath.Join(t.TempDir(), "r.txt")
	os.WriteFile(path, []byte(in.String()), 0o644)
	results, _, err := contract.ReadFiles(path)
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(t.TempDir(), "scale")
	if drawn, err := PlotScale(results, "t", base); err != nil || !drawn {
		t.Fatalf("drawn %v, err %v", drawn, err)
	}
	for _, ext := range []string{".png", ".svg"} {
		if st, err := os.Stat(base + ext); err != nil || st.Size() == 0 {
			t.Errorf("%s%s: %v", base, ext, err)
		}
	}
	if drawn, err := PlotScale(results[:2], "t", base+"-one"); err != nil || drawn {
		t.Errorf("one size: drawn %v, err %v", drawn, err)
	}
}

// TestWriteBaselines: each cell's rows/s is divided by its own replay's, its
// table's append-order copy's and its scan's scan-only read's (medians), the
// replay's ratio also round by round (median, min–max) and, round by round, the
// ratio the CPU allows (the replay's CPU per row, job and compactions, ÷ the
// backfill's), the same of the replay at the backfill's pace, and the backfill's
// compaction bytes ÷ each replay's, then the ceiling (the replay's CPU ÷ the
// replay's plus the scan-only read's, per row the backfill handled), and a cell
// without a baseline is left out.
func TestWriteBaselines(t *testing.T) {
	var in strings.Builder
	for round, f := range []float64{1, 1.1, 0.9} {
		for _, persist := range []string{"off", "on"} {
			c := "profile=mem/workload=narrow/rows=1000/persist=" + persist + "/scan=merged/barrier=100rows/par=2"
			bf := 900_000.0
			if persist == "on" {
				bf = 800_000
			}
			// The replay's load follows its cell's round by round, except with
			// persist=on, whose per-round ratios are 0.667, 1.1, 0.72: their median
			// differs from the medians' ratio (0.8), and pairing each side's sorted
			// values instead of its rounds would give 0.733–0.9.
			rf := f
			if persist == "on" {
				rf = []float64{1.2, 0.8, 1}[round]
			}
			// CPU per row, the job's and the compactions': with persist=off the
			// replay's ÷ the backfill's is 0.9 every round; with persist=on 0.5,
			// 0.6, 0.75.
			bfCPU, rpCPU := 1000.0, 900.0
			if persist == "on" {
				bfCPU, rpCPU = []float64{2000, 1500, 1200}[round], 900
			}
			// Compaction bytes: with persist=off the same in both every round;
			// with persist=on the backfill's are 1.2, 1.5 and 1 times the replay's.
			bfCompacted := 1000.0
			if persist == "on" {
				bfCompacted = []float64{1200, 1500, 1000}[round]
			}
			// The replay at the backfill's pace: CPU 950 with persist=off (0.95 of
			// the backfill's), 1800 with persist=on (0.9, 1.2, 1.5); compaction
			// bytes 1100 (the backfill's 0.909 of them) and 1250 (0.96, 1.2, 0.8).
			pacedCPU, pacedCompacted := 950.0, 1100.0
			if persist == "on" {
				pacedCPU, pacedCompacted = 1800, 1250
			}
			fmt.Fprintf(&in, "BenchmarkBackfill/%s-2 1 1000 ns/op %g rows/s %g cpu-ns/row 100 compact-cpu-ns/row %g fs-compaction-B/op\n", c, bf*f, bfCPU-100, bfCompacted)
			fmt.Fprintf(&in, "BenchmarkReplay/%s-2 1 1000 ns/op %g rows/s %g cpu-ns/row 100 compact-cpu-ns/row 1000 fs-compaction-B/op %g paced-cpu-ns/row 100 paced-compact-cpu-ns/row %g paced-fs-compaction-B/op\n",
				c, 1_000_000*rf, rpCPU-100, pacedCPU-100, pacedCompacted)
		}
		fmt.Fprintf(&in, "BenchmarkRawCopy/profile=mem/workload=narrow/rows=1000-2 1 1000 ns/op %g rows/s\n", 2_000_000*f)
		// The scan-only read: 45 ns a row of its 4 rows an op, 180 ns an op, which is
		// 200 ns a row of the persist=off backfill's 0.9 rows an op and 225 of the
		// persist=on one's 0.8 (medians): ceilings 900 ÷ 1100 and 900 ÷ 1125.
		fmt.Fprintf(&in, "BenchmarkScanOnly/profile=mem/workload=narrow/rows=1000/scan=merged/par=2-2 1 1000 ns/op %g rows/s 45 cpu-ns/row\n", 4_000_000*f)
	}
	fmt.Fprintf(&in, "BenchmarkBackfill/profile=mem/workload=narrow/rows=5/persist=on/scan=merged/barrier=100rows/par=2-2 1 1000 ns/op 5 rows/s\n")
	path := filepath.Join(t.TempDir(), "r.txt")
	os.WriteFile(path, []byte(in.String()), 0o644)
	results, _, err := contract.ReadFiles(path)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if wrote, err := WriteBaselines(&out, results); err != nil || !wrote {
		t.Fatalf("wrote %v, err %v", wrote, err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("want a title, a header and two cells:\n%s", out.String())
	}
	for _, want := range []struct{ line, fields string }{
		{lines[2], "900000 0.900 0.900 (0.900–0.900) 0.900 (0.900–0.900) 0.950 (0.950–0.950) 1.000 (1.000–1.000) 0.909 (0.909–0.909) 0.450 0.225 0.818 profile=mem/workload=narrow/rows=1000/persist=off/scan=merged/barrier=100rows/par=2"},
		{lines[3], "800000 0.800 0.720 (0.667–1.100) 0.600 (0.450–0.750) 1.200 (0.900–1.500) 1.200 (1.000–1.500) 0.960 (0.800–1.200) 0.400 0.200 0.800 profile=mem/workload=narrow/rows=1000/persist=on/scan=merged/barrier=100rows/par=2"},
	} {
		if got := strings.Join(strings.Fields(want.line), " "); got != want.fields {
			t.Errorf("got  %s\nwant %s", got, want.fields)
		}
	}
	for _, label := range []string{"÷ replay", "CPU per round", "paced CPU per round", "compaction B per round", "paced compaction B per round", "÷ append-order copy", "÷ scan-only", "ceiling"} {
		if !strings.Contains(lines[1], label) {
			t.Errorf("header %q lacks %q", lines[1], label)
		}
	}
	var none strings.Builder
	if wrote, _ := WriteBaselines(&none, results[len(results)-1:]); wrote || none.Len() > 0 {
		t.Errorf("a cell without baselines wrote:\n%s", none.String())
	}
}

// TestCeiling: the replay's CPU a row ÷ (it + the scan-only read's CPU an op ÷ the
// backfill's rows an op), of the medians; "—" where a side or a figure is missing.
func TestCeiling(t *testing.T) {
	backfill := &rounds{handled: []float64{1000, 1100, 900}}
	replay := &rounds{cpu: []float64{800, 900, 1000}}
	reads := func(cpu float64) *rounds { return &rounds{cpu: []float64{cpu}, handled: []float64{1000}} }
	for _, tc := range []struct {
		name                   string
		backfill, replay, scan *rounds
		want                   string
	}{
		{"both", backfill, replay, &rounds{cpu: []float64{90, 100, 120}, handled: []float64{1000, 1000, 1000}}, "0.900"},
		{"reads cost the replay's CPU", backfill, replay, reads(900), "0.500"},
		{"no scan-only read", backfill, replay, nil, "—"},
		{"no replay", backfill, nil, reads(100), "—"},
		{"scan-only without CPU", backfill, replay, reads(0), "—"},
		{"backfill without a time", &rounds{handled: []float64{0}}, replay, reads(100), "—"},
	} {
		if got := ceiling(tc.backfill, tc.replay, tc.scan); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}
