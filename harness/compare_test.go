package harness

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/judge"
)

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
var trace = flag.String("TRACE", "", "")
var _ = flag.String("PROFILEFILE", "", "")

func init() {
	for _, d := range DIMENSIONS {
		dims[d] = flag.String(d, "", "")
	}
}

func BenchmarkBackfill(b *testing.B) {
	var parts []string
	for _, d := range DIMENSIONS {
		if v := *dims[d]; v != "" && v != "default" && v != "none" { // names leave out these defaults
			parts = append(parts, d+"="+v)
		}
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

// tiny is tinyBench sleeping d, with the contract's flag names.
func tiny(d string) string {
	return strings.NewReplacer("SLEEP", d, "TRACE", contract.FlagTrace, "PROFILEFILE", contract.FlagProfileFile,
		"DIMENSIONS", fmt.Sprintf("%#v", contract.DimensionNames())).Replace(tinyBench)
}

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
	write("bench/bench_test.go", tiny("20*time.Millisecond"))
	git("add", ".")
	git("commit", "-q", "-m", "fast")
	write("bench/bench_test.go", tiny("40*time.Millisecond"))
	git("commit", "-q", "-am", "slow")

	m := QuickMatrix()
	m.Profiles, m.Workloads, m.Persist = []string{"mem"}, []string{"narrow"}, []bool{false}
	var progress strings.Builder
	cfg := CompareConfig{
		Measure: Measure{Matrix: m, Count: 8, Src: repo},
		Output:  Output{Stdout: &strings.Builder{}, Progress: &progress, Logger: slog.New(slog.NewTextHandler(&progress, nil))},
		Options: judge.Options{Thresholds: wholeJobThresholds(), Correction: judge.Holm, Alpha: 0.05},
		Confirm: 1, CommandLine: []string{"benchrun", "compare", "HEAD~1", "HEAD"},
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
			if f.Status == judge.Regression {
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
		for _, f := range []string{"base.txt", "head.txt", "base-confirm.txt", "head-confirm.txt", "metrics.txt", "verdict.json", "report.md", "command.txt"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Error(err)
			}
		}
		// Both passes keep their traces: 8 rounds each of the main pass and of the
		// confirmation.
		for _, tc := range []struct {
			glob string
			want int
		}{{"traces/base/*.jsonl", 8}, {"traces/head/*.jsonl", 8}, {"traces/confirm/base/*.jsonl", 8}, {"traces/confirm/head/*.jsonl", 8}} {
			if got, _ := filepath.Glob(filepath.Join(dir, tc.glob)); len(got) != tc.want {
				t.Errorf("%s: %d files, want %d", tc.glob, len(got), tc.want)
			}
		}
		// Progress lines count each pass on its own: 16 runs each.
		if p := progress.String(); !strings.Contains(p, "run=16/16") || strings.Contains(p, "run=17/") || strings.Contains(p, "/32 ") {
			t.Errorf("progress lines do not count per pass:\n%s", p)
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
		// Sleeps jitter by a few per cent: eight rounds may not settle a 3 % threshold.
		if err != nil && !errors.Is(err, ErrInconclusive) {
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

// wholeJobThresholds are the default thresholds plus whole-job throughput and wall
// time, which the fixtures and synthetic data here report.
func wholeJobThresholds() judge.Thresholds {
	th := judge.DefaultThresholds()
	th.Set("rows/s=3%,sec/op=3%,barrier-p99-sec=10%")
	return th
}

// TestConfirmRounds: the confirmation runs --confirm × --count rounds, but never so
// few that its paired test cannot reach alpha over the judged pairs: the smallest
// signed-rank p-value of n pairs is 2/2ⁿ.
func TestConfirmRounds(t *testing.T) {
	for _, tc := range []struct {
		count, confirm, judged int
		alpha                  float64
		want                   int
	}{
		{10, 1, 5, 0.05, 10},   // level 0.01 needs 8
		{6, 1, 5, 0.0221, 9},   // level 0.0044 needs 9 (2/2⁹ = 0.0039)
		{6, 1, 15, 0.0221, 11}, // level 0.0015 needs 11
		{6, 2, 5, 0.05, 12},    // two batches are more than enough
		{3, 1, 5, 0.05, 8},
		{8, 1, 2, 0.05, 8}, // level 0.025 needs 7
	} {
		if got := confirmRounds(CompareConfig{Measure: Measure{Count: tc.count}, Confirm: tc.confirm}, tc.alpha, tc.judged); got != tc.want {
			t.Errorf("count %d, confirm %d, %d judged pairs, α %g: %d rounds, want %d", tc.count, tc.confirm, tc.judged, tc.alpha, got, tc.want)
		}
	}
}

// TestFailedIn: the head's failed jobs come from go test's "--- FAIL" lines in a
// results file and, for a results directory, from its failures.txt (cells and runs
// after the cells alike).
func TestFailedIn(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "results.txt"), []byte("BenchmarkScan-2 1 100 ns/op\n--- FAIL: BenchmarkMerge-2\n    x_test.go:1: boom\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "failures.txt"), []byte("run 3 (round 2, head) BenchmarkBackfill/profile=mem/rows=1: exit status 2\n    panic: x\nafter the cells (round 1) BenchmarkRecovery/profile=mem: no result in the output\n"), 0o644)
	got, err := failedIn(parseSide(dir))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Merge-2", "Backfill/profile=mem/rows=1", "Recovery/profile=mem"}
	if !slices.Equal(got, want) {
		t.Errorf("failed %q, want %q", got, want)
	}
	if got, _ := failedIn(parseSide(filepath.Join(dir, "results.txt"))); !slices.Equal(got, want[:1]) {
		t.Errorf("a file: failed %q, want %q", got, want[:1])
	}
}
