package harness

import (
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"image/png"
	_ "image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/backfill-bench/backfill-bench/contract/jobtrace"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/render/traceplot"
)

// compareFixture holds two results files of one machine, the head 10 % slower in
// one cell.
var compareFixture = filepath.Join("judge", "testdata", "compare")

// copyDir copies a fixture directory tree into a temporary one.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// checkImages checks that each plot of dir exists as a PNG 800 px wide and as an SVG.
func checkImages(t *testing.T, dir string, names []string) {
	t.Helper()
	for _, n := range names {
		f, err := os.Open(filepath.Join(dir, n+".png"))
		if err != nil {
			t.Error(err)
			continue
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil {
			t.Errorf("%s.png: %v", n, err)
		} else if cfg.Width != 800 || cfg.Height < 400 || cfg.Height > 1600 {
			t.Errorf("%s.png is %d×%d, want 800 wide and 400–1600 high", n, cfg.Width, cfg.Height)
		}
		data, err := os.ReadFile(filepath.Join(dir, n+".svg"))
		if err != nil {
			t.Error(err)
			continue
		}
		var root struct{ XMLName xml.Name }
		if err := xml.Unmarshal(data, &root); err != nil || root.XMLName.Local != "svg" {
			t.Errorf("%s.svg: not an SVG document (%v, root %q)", n, err, root.XMLName.Local)
		}
	}
}

func TestPlotRunDir(t *testing.T) {
	dir := copyDir(t, filepath.Join("testdata", "plots", "run"))
	made, skipped, err := PlotDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"variants", "barrier-cdf", "bytes", "timeline"}
	if !slices.Equal(made, want) || len(skipped) != 0 {
		t.Fatalf("made %v, skipped %v; want %v", made, skipped, want)
	}
	checkImages(t, filepath.Join(dir, "plots"), made)
}

func TestPlotCompareDir(t *testing.T) {
	dir := t.TempDir()
	cfg := CompareConfig{Base: filepath.Join(compareFixture, "base.txt"), Head: filepath.Join(compareFixture, "head.txt"), Out: dir,
		Options: judge.Options{Thresholds: wholeJobThresholds(), Correction: judge.Holm, Alpha: 0.05}, Output: Output{Stdout: io.Discard}, NoPlots: true}
	cfg.Count = 1
	if _, err := Compare(t.Context(), cfg); !errors.Is(err, ErrRegression) {
		t.Fatal(err)
	}
	made, skipped, err := PlotDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The fixture has no traces and no bytes: those plots say so instead.
	if !slices.Equal(made, []string{"deltas", "variants"}) || len(skipped) != 3 {
		t.Fatalf("made %v, skipped %v", made, skipped)
	}
	for _, s := range skipped {
		if !strings.Contains(s, "no ") {
			t.Errorf("skipped without a reason: %q", s)
		}
	}
	checkImages(t, filepath.Join(dir, "plots"), made)
}

// TestPlotDegenerate feeds inputs with little in them: every plot is drawn or
// skipped with a reason, never a panic.
func TestPlotDegenerate(t *testing.T) {
	line := func(persist, values string) string {
		return "BenchmarkBackfill/profile=mem/workload=narrow/rows=1/persist=" + persist + "/scan=merged/barrier=1s/par=1-2 1 " + values + "\n"
	}
	all := "100 ns/op 5 rows/s 0.1 barrier-p99-sec 3 write-amp 1e-6 cpu-sec/row 10 logical-B/op 20 fs-wal-B/op 5 fs-flush-B/op 0 fs-compaction-B/op"
	trace := `{"cell":"profile=mem/workload=narrow/rows=1/persist=on/scan=merged/barrier=1s/par=1","epochs":[{"epoch":2,"at_sec":0,"latency_sec":0.1,"snapshot_rows":1}]}` + "\n"
	for _, tc := range []struct {
		name    string
		results string
		trace   string
	}{
		{"one run", line("off", all), trace},
		{"n=1 each side", line("off", all) + line("on", all), trace},
		{"all values equal", strings.Repeat(line("off", all)+line("on", all), 6), strings.Repeat(trace, 3)},
		{"metric missing on one side", line("off", all) + line("on", "100 ns/op 5 rows/s"), ""},
		{"zero everywhere", line("off", "0 ns/op 0 rows/s 0 barrier-p99-sec 0 write-amp") + line("on", "0 ns/op 0 rows/s 0 barrier-p99-sec 0 write-amp"),
			`{"cell":"profile=mem/workload=narrow/rows=1/persist=off/scan=merged/barrier=1s/par=1","epochs":[{"epoch":2,"latency_sec":0}]}` + "\n"},
		{"no epochs", line("on", all), `{"cell":"profile=mem/workload=narrow/rows=1/persist=on/scan=merged/barrier=1s/par=1","epochs":[]}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.MkdirAll(filepath.Join(dir, "traces"), 0o755)
			os.WriteFile(filepath.Join(dir, "results.txt"), []byte(tc.results), 0o644)
			if tc.trace != "" {
				os.WriteFile(filepath.Join(dir, "traces", "t.r1.jsonl"), []byte(tc.trace), 0o644)
			}
			made, skipped, err := PlotDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(made)+len(skipped) != 4 {
				t.Errorf("made %v, skipped %v: want each of the 4 plots accounted for", made, skipped)
			}
			for _, s := range skipped {
				if strings.Contains(s, "could not draw") {
					t.Errorf("gonum/plot panicked: %s", s)
				}
			}
			checkImages(t, filepath.Join(dir, "plots"), made)
		})
	}
	if _, _, err := PlotDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "neither results.txt") {
		t.Errorf("empty directory: err = %v", err)
	}
}

func TestPlotTrends(t *testing.T) {
	fixture, err := os.ReadFile(filepath.Join("testdata", "plots", "run", "results.txt"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var files []string
	// Written newest first: the plot orders them by commit time.
	for i := 5; i >= 1; i-- {
		f := filepath.Join(dir, fmt.Sprintf("night%d.txt", i))
		head := fmt.Sprintf("commit: %07d\ncommit-time: 2026-11-%02dT02:00:00Z\n", i, i)
		os.WriteFile(f, append([]byte(head), fixture...), 0o644)
		files = append(files, f)
	}
	out := filepath.Join(dir, "out")
	made, err := PlotTrendFiles(files, out)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(made, []string{"trends-mem"}) {
		t.Errorf("made %v, want one plot for the one profile", made)
	}
	checkImages(t, out, made)
	// One file is a trend of one point, still drawn.
	if _, err := PlotTrendFiles(files[:1], out); err != nil {
		t.Errorf("one file: %v", err)
	}
	if _, err := PlotTrendFiles(nil, out); err == nil {
		t.Error("no files: no error")
	}
}

// TestCompareFilesOutsideACheckout compares two results files from a directory
// that is no Go module: nothing needs the checkout.
func TestCompareFilesOutsideACheckout(t *testing.T) {
	base, err := filepath.Abs(filepath.Join(compareFixture, "base.txt"))
	if err != nil {
		t.Fatal(err)
	}
	head, _ := filepath.Abs(filepath.Join(compareFixture, "head.txt"))
	t.Chdir(t.TempDir())
	cfg := CompareConfig{Base: base, Head: head,
		Options: judge.Options{Thresholds: wholeJobThresholds(), Correction: judge.Holm, Alpha: 0.05}, Output: Output{Stdout: io.Discard}, NoPlots: true}
	cfg.Count, cfg.Src = 1, "/nonexistent"
	if _, err := Compare(t.Context(), cfg); !errors.Is(err, ErrRegression) {
		t.Fatalf("err = %v, want the fixture's regression", err)
	}
	if _, err := os.Stat(filepath.Join("compare", "verdict.json")); err == nil {
		t.Error("verdict.json outside compare/<base>..<head>")
	}
	if m, _ := filepath.Glob(filepath.Join("compare", "*", "verdict.json")); len(m) != 1 {
		t.Errorf("verdict.json files under ./compare: %v", m)
	}
}

// TestNightlyKeepsAStricterAlpha: the nightly takes compare's analysis options and
// refuses bad ones before recording anything.
func TestNightlyKeepsAStricterAlpha(t *testing.T) {
	hist := t.TempDir()
	cfg := NightlyConfig{Results: filepath.Join(compareFixture, "base.txt"), History: hist,
		Run: RunConfig{Output: Output{Stdout: io.Discard}}}
	cfg.Analysis.Options = judge.Options{Thresholds: wholeJobThresholds(), Correction: judge.BH, Alpha: 2}
	var ce *ConfigError
	if _, err := Nightly(t.Context(), cfg); !errors.As(err, &ce) {
		t.Fatalf("alpha 2: err = %v, want a configuration error", err)
	}
	cfg.Analysis.Alpha = 0.001
	rep, err := Nightly(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(rep.Dir, "nightly.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "bh correction, α = 0.001") {
		t.Errorf("nightly.md does not state the alpha and correction given:\n%s", md)
	}
}

// TestTimelineWithPhases: a trace with per-epoch phases draws the third panel, and
// one with LSM state a fourth.
func TestTimelineWithPhases(t *testing.T) {
	tr := jobtrace.Trace{Cell: "profile=mem/workload=narrow/rows=1/persist=on/scan=merged/barrier=100rows/par=2"}
	for i := range 20 {
		tr.Epochs = append(tr.Epochs, jobtrace.TraceEpoch{Epoch: uint64(i + 2), AtSec: float64(i) / 100, LatencySec: 0.001, SnapshotRows: 100,
			Phases: map[string]float64{"scan": 0.004, "wait": 0.002, "open": 0.001, "commit": 0.001}})
	}
	dir := t.TempDir()
	height := func(name string, tr jobtrace.Trace) int {
		t.Helper()
		if err := traceplot.Timeline(tr, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		checkImages(t, dir, []string{name})
		f, err := os.Open(filepath.Join(dir, name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cfg, _, err := image.DecodeConfig(f)
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Height
	}
	phases := height("timeline", tr)
	for i := range tr.Epochs {
		tr.Epochs[i].LSM = &jobtrace.TraceLSM{L0Files: int64(i), L0Sublevels: int32(i / 2), Memtables: 1, ReadAmp: 3 + i/2, Stalls: int64(i % 3)}
	}
	if lsm := height("timeline-lsm", tr); lsm <= phases {
		t.Errorf("the timeline with LSM state is %d pixels high, no higher than without (%d): no LSM panel", lsm, phases)
	}
}
