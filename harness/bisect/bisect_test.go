package bisect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness"
	"github.com/backfill-bench/backfill-bench/harness/judge"
)

// syntheticBench is the bench package of a synthetic history: a fake bench binary
// that answers the runner as the real one does, for one cell, reporting a speed
// set by the constant WORK with 0.5 % jitter. It reports rather than times: on a
// shared machine a timed loop's spread (±60 % was seen) says nothing about the
// search, which is what the test checks. Commits differ in WORK only. The jitter
// is a random float, never a tie: it was once the clock's nanoseconds modulo 1001,
// and when one of an unchanged commit's 6 pairs drew the same value on both sides
// (about 1 in 1000 pairs), the paired interval of the 5 others could not be formed
// at 95 %, the commit was inconclusive, and the search could not name the first
// bad one (seen twice in CI).
const syntheticBench = `package bench

import (
	"flag"
	"fmt"
	"os"
	"math/rand/v2"
	"testing"
)

const work = WORK // the cost of a row

func TestMain(m *testing.M) {
FLAGS	flag.Parse()
	if flag.Lookup("test.bench").Value.String() == "^$" {
		os.Exit(0) // the runner's probe: no benchmark
	}
	jitter := (rand.Float64() - 0.5) / 100 // ±0.5 %
	rowsPerSec := 1e9 / work * (1 + jitter)
	fmt.Println("Unit steady-rows/s better=higher")
	fmt.Printf("BenchmarkBackfill/CELL-2 \t1\t%d ns/op\t%g steady-rows/s\nPASS\n", int(2000/rowsPerSec*1e9), rowsPerSec)
}
`

// syntheticHistory makes a git repository of 16 commits: the first (good) with
// a row's cost at base, a slowdown to 3× injected at commit slow, and a commit
// that does not build at broken (fixed by the next). It returns the commits,
// oldest first.
func syntheticHistory(t *testing.T, dir string, cell contract.Cell, slow, broken int) []string {
	t.Helper()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	var flags strings.Builder
	for _, name := range append(append([]string{}, contract.DimensionNames()...), contract.FlagProfileFile, contract.FlagCrash, contract.FlagTrace) {
		fmt.Fprintf(&flags, "\tflag.String(%q, \"\", \"\")\n", name)
	}
	fmt.Fprintf(&flags, "\tflag.Bool(%q, false, \"\")\n", contract.FlagStartGate)
	os.MkdirAll(filepath.Join(dir, "bench"), 0o755)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/synthetic\n\ngo 1.22\n"), 0o644)
	git("init", "-q")
	var commits []string
	for i := 0; i < 16; i++ {
		work := "5000"
		if i >= slow {
			work = "15000"
		}
		src := strings.NewReplacer("WORK", work, "FLAGS", flags.String(), "CELL", cell.Name()).Replace(syntheticBench)
		os.WriteFile(filepath.Join(dir, "bench", "bench_test.go"), []byte(src), 0o644)
		os.WriteFile(filepath.Join(dir, "notes.txt"), []byte(fmt.Sprintf("commit %d\n", i)), 0o644)
		os.Remove(filepath.Join(dir, "bench", "broken.go"))
		if i == broken {
			os.WriteFile(filepath.Join(dir, "bench", "broken.go"), []byte("package bench\n\nvar x = undefined\n"), 0o644)
		}
		git("add", "-A")
		git("commit", "-q", "-m", fmt.Sprintf("commit %d", i))
		commits = append(commits, git("rev-parse", "HEAD"))
	}
	return commits
}

// TestBisectNamesTheInjectedCommit bisects a 16-commit synthetic history with a
// 3× slowdown injected at one commit and a commit that does not build just before
// it: the search names the injected commit, skips the broken one, and a second
// search answers from the cache alone; --step judges HEAD for git bisect run.
func TestBisectNamesTheInjectedCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and measures a synthetic history")
	}
	const slow, broken = 11, 9
	cell := harness.QuickMatrix().Cells()[0]
	repo := t.TempDir()
	commits := syntheticHistory(t, repo, cell, slow, broken)
	var out bytes.Buffer
	cfg := Config{
		Compare: harness.CompareConfig{
			Measure: harness.Measure{Matrix: harness.QuickMatrix(), Count: 6, Src: repo, Timeout: time.Minute, Pairing: "sequential"},
			Output:  harness.Output{Stdout: &out},
			Options: judge.Options{Thresholds: judge.DefaultThresholds(), Correction: judge.Holm, Alpha: 0.05},
		},
		Good: commits[0], Bad: commits[15], Cell: cell.Name(), Cache: filepath.Join(t.TempDir(), "cache"),
	}
	res, err := Run(context.Background(), cfg)
	if !errors.Is(err, harness.ErrRegression) || res.FirstBad == nil || res.FirstBad.Hash != commits[slow] {
		t.Fatalf("bisect: %v, result %+v; want the first bad commit %s (commit %d)\n%s", err, res, commits[slow], slow, out.String())
	}
	t.Logf("named %s %q in %d steps:\n%s", res.FirstBad.Hash[:12], res.FirstBad.Subject, len(res.Steps), out.String())
	skippedBroken := false
	for _, s := range res.Steps {
		if s.Commit.Hash == commits[broken] {
			skippedBroken = s.Outcome == StepSkip && strings.Contains(s.Why, "does not build")
		}
	}
	if !skippedBroken {
		t.Errorf("the commit that does not build was not probed and skipped: %+v", res.Steps)
	}

	// Again: every step from the cache.
	again, err := Run(context.Background(), cfg)
	if !errors.Is(err, harness.ErrRegression) || again.FirstBad == nil || again.FirstBad.Hash != commits[slow] {
		t.Fatalf("second bisect: %v, %+v", err, again)
	}
	for _, s := range again.Steps {
		if !s.Cached {
			t.Errorf("second bisect measured %s again", s.Commit.Hash[:12])
		}
	}

	// --step, as git bisect run calls it, at HEAD (the last commit: bad, cached) and
	// at the broken commit (skip).
	step := cfg
	step.Step, step.Bad = true, ""
	if _, err := Run(context.Background(), step); !errors.Is(err, harness.ErrRegression) {
		t.Errorf("--step at HEAD: %v, want a regression (exit 1)", err)
	}
	step.Bad = commits[broken]
	if _, err := Run(context.Background(), step); !errors.Is(err, ErrStepSkip) {
		t.Errorf("--step at the broken commit: %v, want a skip (exit 125)", err)
	}
}

// TestNextProbe: the next commit to judge is the middle one between the last good
// and the first bad, else its nearest neighbour not skipped; none when only
// skipped commits are left.
func TestNextProbe(t *testing.T) {
	for _, tc := range []struct {
		lo, hi  int
		skipped []int
		want    int
		ok      bool
	}{
		{-1, 14, nil, 6, true},
		{6, 10, []int{8}, 7, true},
		{7, 10, []int{8}, 9, true},
		{7, 9, []int{8}, 0, false},
		{3, 4, nil, 0, false},
	} {
		skipped := map[int]bool{}
		for _, i := range tc.skipped {
			skipped[i] = true
		}
		got, ok := nextProbe(tc.lo, tc.hi, skipped)
		if got != tc.want || ok != tc.ok {
			t.Errorf("nextProbe(%d, %d, %v) = %d, %v; want %d, %v", tc.lo, tc.hi, tc.skipped, got, ok, tc.want, tc.ok)
		}
	}
}

// TestSelectCells: --cell takes a cell's full name (also outside the matrix), or
// a pattern whose matches make a matrix; others are refused with the reason.
func TestSelectCells(t *testing.T) {
	m := harness.QuickMatrix()
	m.Profiles = []string{"mem"}
	for _, tc := range []struct {
		pattern string
		cells   int
		err     string
	}{
		{"profile=gp3/workload=narrow/rows=1000/persist=on/scan=merged/barrier=100ms/par=2", 1, ""},
		{"workload=narrow", 2, ""},
		{"persist=on", 2, ""},
		{".", 4, ""},
		{"workload=nope", 0, "matches none"},
		{"(workload=narrow.*persist=on|workload=bid.*persist=off)", 0, "do not make a matrix"},
		{"(", 0, "neither a cell's name nor a regular expression"},
	} {
		got, err := selectCells(m, tc.pattern)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.pattern, err, tc.err)
			}
			continue
		}
		if err != nil || len(got.Cells()) != tc.cells {
			t.Errorf("%q: %d cells (%v), want %d", tc.pattern, len(got.Cells()), err, tc.cells)
		}
	}
}
