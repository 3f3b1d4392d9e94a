package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backfill-bench/backfill-bench/harness"
	"github.com/backfill-bench/backfill-bench/harness/runner"
	"github.com/backfill-bench/backfill-bench/harness/testbed"
)

var update = flag.Bool("update", false, "rewrite golden files")

func runArgs(args ...string) (stdout, stderr string, err error) {
	var o, e bytes.Buffer
	err = run(context.Background(), &o, &e, args)
	return o.String(), e.String(), err
}

// TestGolden: commands' output against testdata/<case>.stdout (-update rewrites them).
// A run's plan depends on the machine's room for the tables, so its cases fix one:
// 16 GiB of memory, which the scale sweep's 10⁸-row cells do not fit.
func TestGolden(t *testing.T) {
	const room = 16 << 30
	for _, tc := range []struct {
		name string
		args []string
		room int64 // memory for run's tables; 0: not a run
	}{
		{"gen-bid-table", []string{"gen", "--workload", "bid", "--rows", "3", "--seed", "1"}, 0},
		{"gen-person-csv", []string{"gen", "--workload", "person", "--rows", "2", "--format", "csv"}, 0},
		{"gen-narrow-json", []string{"gen", "--workload", "narrow+uniform", "--rows", "2", "--format", "json"}, 0},
		{"run-dry-run", []string{"run", "--dry-run", "--pairing", "sequential"}, room}, // the default pairing depends on the machine
		{"run-dry-run-matrix", []string{"run", "--dry-run", "--profile", "mem,gp3", "--workload", "bid,narrow+zipfian:1.2",
			"--rows", "200_000", "--persist", "on,off", "--barrier", "100ms,1s", "--par", "1,2", "--count", "5", "--pairing", "sequential"}, room},
		{"run-dry-run-scale", []string{"run", "--dry-run", "--matrix", "scale"}, room},
		{"run-dry-run-scale-sweep", []string{"run", "--dry-run", "--matrix", "scale", "--rows", "100000", "--vnodes", "1,256,4096", "--par", "1,2,4,8"}, room},
		{"run-dry-run-chunk-limit", []string{"run", "--dry-run", "--rows", "100000", "--persist", "on", "--barrier", "100ms", "--chunk", "256,1024",
			"--limit", "none,200k/s..50k/s@50%,0/s..100k/s@2s", "--count", "2", "--pairing", "sequential"}, room},
		{"profiles", []string{"profiles"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out string
			var err error
			if tc.room == 0 {
				out, _, err = runArgs(tc.args...)
			} else {
				out, err = runWithRoom(tc.args, testbed.Room{Memory: tc.room})
			}
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tc.name+".stdout")
			if *update {
				os.WriteFile(path, []byte(out), 0o644)
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if out != string(want) {
				os.WriteFile(path[:len(path)-len(".stdout")]+".got-stdout", []byte(out), 0o644)
				t.Errorf("output differs from %s", path)
			}
		})
	}
}

// runWithRoom is `benchrun run` (args[0]) on a machine with room for the tables.
func runWithRoom(args []string, room testbed.Room) (string, error) {
	var o, e bytes.Buffer
	cfg, err := runConfig(&o, &e, args[1:])
	if err != nil {
		return "", err
	}
	cfg.Room = func() testbed.Room { return room }
	_, err = harness.Run(context.Background(), cfg)
	return o.String(), err
}

func TestGenFormatsParse(t *testing.T) {
	out, _, err := runArgs("gen", "--workload", "auction", "--rows", "4", "--format", "csv")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 || recs[0][0] != "id" || len(recs[1]) != 10 {
		t.Errorf("csv: %d records, header %v", len(recs), recs[0])
	}
	out, _, err = runArgs("gen", "--workload", "bid", "--rows", "4", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("json: %d lines", len(lines))
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if _, ok := m["_row_id"]; !ok || len(m) != 8 {
			t.Errorf("json row %v", m)
		}
	}
}

func TestWorkloadsLists(t *testing.T) {
	out, _, err := runArgs("workloads")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"person", "auction", "bid", "narrow", "wide", "zipfian", "hot-range", "tombstone", "update-heavy", "email_address string"} {
		if !strings.Contains(out, want) {
			t.Errorf("listing lacks %q", want)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"nope"},
		{"gen", "--workload", "nope"},
		{"gen", "--format", "xml"},
		{"gen", "--rows", "-1"},
		{"gen", "--bogus"},
		{"gen", "extra"},
		{"run", "--persist", "maybe"},
		{"run", "--count", "0"},
		{"run", "--profile", "nosuch"},
		{"run", "--profile-file", "/nonexistent/p.json"},
		{"run", "--barrier", "0s"},
		{"run", "--scan", "sideways"},
		{"run", "--workload", "bid+nope"},
		{"run", "--rows", "-5"},
		{"run", "--par", "0"},
		{"profiles", "--profile-file", "/nonexistent/p.json"},
		{"compare"},
		{"compare", "a", "b", "c"},
		{"compare", "testdata/profiles.stdout", "main"},
		{"compare", "main", "--alpha", "2"},
		{"compare", "main", "--correction", "bonferroni"},
		{"compare", "main", "--threshold", "rows/s"},
		{"compare", "main", "--count", "0"},
		{"compare", "main", "--budget", "-1s"},
		{"compare", "main", "--threshold", "nosuchunit=5%"},
		{"compare", "nosuch.txt", "other.txt"},
		{"compare", "./nosuch", "main"},
		{"run", "--barrier", "100ns"},
		{"run", "--par", "1000"},
		{"run", "--timeout", "0s"},
		{"run", "--barrier", "50krows", "--changes", "10k/s"},
		{"crashtest", "--parallel", "0"},
		{"crashtest", "--parallel", "-2"},
		{"compare", "main", "--thresholds-file", "/nonexistent.json"},
		{"crashtest", "--points", "0"},
		{"crashtest", "--rows", "0"},
		{"crashtest", "--scan", "sideways"},
		{"crashtest", "--persist", "maybe"},
		{"run", "--read", "dirty"},
		{"run", "--vnodes", "1", "--par", "2"},
		{"run", "--vnodes", "0"},
		{"fit"},
		{"fit", "/nonexistent.txt"},
		{"predict", "--model", "/nonexistent.json", "--rows", "1e9"},
		{"predict", "--model", "m.json", "--persist", "maybe"},
		{"predict", "--rows", "1e9"}, // no --model
		{"site"},
		{"site", "--history", "/nonexistent", "--out", "x"},
		{"site", "--history", ".", "--out", "x", "--commit-url", "https://example.invalid/"},
	} {
		_, _, err := runArgs(args...)
		if err == nil {
			t.Errorf("%q: no error", args)
			continue
		}
		if exitCode(err) != 2 {
			t.Errorf("%q: exit code %d, want 2 (usage): %v", args, exitCode(err), err)
		}
	}
	if _, _, err := runArgs("help"); err != nil {
		t.Errorf("help: %v", err)
	}
	if _, _, err := runArgs("gen", "-h"); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("gen -h: %v", err)
	}
	// Every subcommand's --help prints its usage and exits 0.
	for _, c := range commands() {
		_, stderr, err := runArgs(c.name, "--help")
		if err != nil && exitCode(err) != 0 || !strings.Contains(stderr, "usage") && !strings.Contains(stderr, "Usage") {
			t.Errorf("%s --help: exit %d (%v), stderr %q", c.name, exitCode(err), err, stderr)
		}
	}
}

func TestCompareFilesExitCodes(t *testing.T) {
	files := filepath.Join("..", "..", "harness", "judge", "testdata", "compare")
	base, head := filepath.Join(files, "base.txt"), filepath.Join(files, "head.txt")
	out, _, err := runArgs("compare", "--threshold", "rows/s=3%,sec/op=3%,barrier-p99-sec=10%", base, head, "--out", t.TempDir())
	if exitCode(err) != 1 || !strings.Contains(out, "✗ REGRESSION") {
		t.Errorf("regressed files: exit %d (%v), want 1\n%s", exitCode(err), err, out)
	}
	// Raising the thresholds beyond the 10 % shift clears the regression, but a
	// cell with one run in the base cannot be settled either way: inconclusive.
	out, _, err = runArgs("compare", "--threshold", "rows/s=20%,sec/op=20%", base, head, "--out", t.TempDir())
	if exitCode(err) != 3 || !strings.Contains(out, "? INCONCLUSIVE") {
		t.Errorf("with 20%% thresholds: exit %d (%v), want 3\n%s", exitCode(err), err, out)
	}
	// Without that cell, every pair is settled: no regression.
	narrow := func(path string) string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var keep []string
		for _, l := range strings.Split(string(data), "\n") {
			if !strings.Contains(l, "workload=bid") && !strings.Contains(l, "workload=wide") {
				keep = append(keep, l)
			}
		}
		out := filepath.Join(t.TempDir(), filepath.Base(path))
		os.WriteFile(out, []byte(strings.Join(keep, "\n")), 0o644)
		return out
	}
	out, _, err = runArgs("compare", "--threshold", "rows/s=20%,sec/op=20%", narrow(base), narrow(head), "--out", t.TempDir())
	if err != nil || !strings.Contains(out, "✓ no regression") {
		t.Errorf("narrow only: %v\n%s", err, out)
	}
}

func TestCrashTestLines(t *testing.T) {
	out, _, err := runArgs("crashtest", "--points", "3", "--rows", "400", "--seed", "5", "--scan", "per-vnode")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want a line per persist mode, got:\n%s", out)
	}
	for i, persist := range []string{"on", "off"} {
		want := "scan=per-vnode persist=" + persist + " points=3 consistent=3 inconsistent=0 crashes="
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d = %q, want it to start with %q", i, lines[i], want)
		}
	}
}

// TestHardenedInputs: bad results files and reused output directories give an
// error that names the file or directory and the fix, and exit 2.
func TestHardenedInputs(t *testing.T) {
	dir := t.TempDir()
	nan := filepath.Join(dir, "nan.txt")
	os.WriteFile(nan, []byte("BenchmarkX 1 100 ns/op NaN rows/s\n"), 0o644)
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, nil, 0o644)
	good := filepath.Join("..", "..", "harness", "judge", "testdata", "compare", "base.txt")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", nan, good, "--out", t.TempDir()}, "nan.txt:1: BenchmarkX: NaN rows/s is not a finite number"},
		{[]string{"merge", good, empty}, "empty.txt: no benchmark results"},
		{[]string{"nightly", "--results", nan, "--history", t.TempDir()}, "nan.txt:1"},
		{[]string{"compare", "nosuch.txt", good}, "nosuch.txt: no such results file"},
	} {
		_, _, err := runArgs(tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != 2 {
			t.Errorf("%q: err = %v (exit %d), want exit 2 and %q", tc.args, err, exitCode(err), tc.want)
		}
	}
	// A compare directory is not silently reused; --force replaces an earlier one.
	out := t.TempDir()
	if _, _, err := runArgs("compare", "--no-plots", "--out", out, good, good); exitCode(err) == 2 {
		t.Fatalf("first compare: %v", err)
	}
	if _, _, err := runArgs("compare", "--no-plots", "--out", out, good, good); exitCode(err) != 2 || !strings.Contains(err.Error(), "already holds files") {
		t.Errorf("reused --out: %v", err)
	}
	if _, _, err := runArgs("compare", "--no-plots", "--force", "--out", out, good, good); exitCode(err) == 2 {
		t.Errorf("--force: %v", err)
	}
	foreign := t.TempDir()
	os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644)
	if _, _, err := runArgs("compare", "--no-plots", "--force", "--out", foreign, good, good); exitCode(err) != 2 || !strings.Contains(err.Error(), "not an earlier benchrun output") {
		t.Errorf("--force on a foreign directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(foreign, "notes.txt")); err != nil {
		t.Errorf("--force removed a foreign file: %v", err)
	}
}

// TestMatricesOfAbsoluteFiguresRunAlone: the nightly and scale matrices, whose
// figures are compared across nights and sizes, run their pairs back to back
// unless told otherwise; the quick suite runs duets where the machine can.
func TestMatricesOfAbsoluteFiguresRunAlone(t *testing.T) {
	if runner.DefaultPairing() != runner.Duet {
		t.Skip("this machine cannot run duets")
	}
	for _, tc := range []struct {
		args  []string
		duets bool
	}{
		{[]string{"run", "--dry-run", "--matrix", "scale"}, false},
		{[]string{"run", "--dry-run", "--matrix", "nightly"}, false},
		{[]string{"run", "--dry-run", "--matrix", "scale", "--pairing", "sequential"}, false},
		{[]string{"run", "--dry-run"}, true},
	} {
		out, _, err := runArgs(tc.args...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got := strings.Contains(out, "at once (duets)"); got != tc.duets {
			t.Errorf("%v: plan says duets %v, want %v:\n%s", tc.args, got, tc.duets, strings.SplitN(out, "\n", 2)[0])
		}
	}
}
