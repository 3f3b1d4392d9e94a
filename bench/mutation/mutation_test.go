package mutation

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var (
	run = flag.Bool("mutants", false, "apply each executor mutant in testdata/ to a copy of the tree and require the suite to catch it (slow: minutes a mutant; nightly, make mutants)")
	all = flag.Bool("mutants.all", false, "run every check on every mutant, not only until it is caught (and its Must-catch check has run)")
)

// step is one check of the suite: a go command run in the tree's copy.
type step struct {
	name string
	args []string
}

// jobStep is one ordinary verifying job of the quick suite's cell (work-driven, so
// it does the same work on a loaded machine), as a benchmark run does it: it
// verifies B == A, the changelog and every persisted state row. bench is
// BenchmarkBackfill, or BenchmarkRecovery: a power loss at half the scan, then
// the resumed job to its verified end.
func jobStep(bench, workload, scan string) step {
	name := "job"
	if bench == "BenchmarkRecovery" {
		name = "recovery job"
	}
	return step{name + " " + workload + " scan=" + scan, []string{"test", "-count=1", "-run", "^$", "-bench", bench, "-benchtime", "1x", "./bench",
		"-workload", workload, "-rows", "300000", "-persist", "on", "-scan", scan, "-barrier", "2500rows", "-par", "2", "-crash", "50%"}}
}

// The suite a mutant must fail: the executor's unit tests, the pipeline's tests
// that do not depend on the clock (time-driven ones flake on a loaded machine,
// which would pass for a catch), and ordinary jobs.
var steps = []step{
	{"go test ./bench/backfill ./bench/scaniter ./bench/progresscheck", []string{"test", "-count=1", "./bench/backfill", "./bench/scaniter", "./bench/progresscheck"}},
	{"go test ./bench/pipeline (work-driven)", []string{"test", "-count=1", "-run", "TestProgressCheckCatchesSnapshotJob|TestCompositeKeyWorkloadEveryScan|TestWorkDrivenCadenceIsDeterministic", "./bench/pipeline"}},
	jobStep("BenchmarkBackfill", "narrow", "merged"),
	jobStep("BenchmarkBackfill", "narrow", "per-vnode"),
	jobStep("BenchmarkBackfill", "narrow", "snapshot"),
	jobStep("BenchmarkBackfill", "groups", "merged"),
	jobStep("BenchmarkRecovery", "narrow", "merged"),
	jobStep("BenchmarkRecovery", "narrow", "per-vnode"),
}

// outcome is what one step said of one tree.
type outcome struct {
	failed bool
	output string
}

// firstError is the line of out that says what failed: a check's message.
func firstError(out string) string {
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if strings.Contains(l, "_test.go:") {
			return l
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "--- FAIL") || strings.Contains(l, "panic:") || strings.Contains(l, "error") {
			return strings.TrimSpace(l)
		}
	}
	return "(no message)"
}

var epochVnode = regexp.MustCompile(`epoch \d+.*vnode \d+|vnode \d+.*epoch \d+`)

// TestMutants applies each mutant to a fresh copy of the module and runs the suite
// on it: every mutant must make a step fail (and the unmutated copy pass them all);
// a mutant's Must-catch header names the step that must catch it: "job" (an
// ordinary job, with a message naming the epoch and the vnode) or "test TestName".
// Each mutant's checks stop once one caught it and its Must-catch check ran
// (-mutants.all: run them all). It logs the table mutant → the checks that caught
// it, and the score.
func TestMutants(t *testing.T) {
	if !*run {
		t.Skip("slow: run with -mutants (make mutants)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	patches, err := filepath.Glob("testdata/*.patch")
	if err != nil || len(patches) == 0 {
		t.Fatalf("no mutants in testdata/ (%v)", err)
	}
	ctx := context.Background()
	// One directory for every copy: the build cache keys on it, so only the
	// mutated packages build again.
	dir := filepath.Join(os.TempDir(), "backfill-bench-mutants")
	// suite runs the steps on the tree with patch applied, in order, until done
	// says the outcomes so far are enough.
	suite := func(t *testing.T, patch string, done func([]outcome) bool) []outcome {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := copyModule(root, dir); err != nil {
			t.Fatal(err)
		}
		if patch != "" {
			abs, _ := filepath.Abs(patch)
			cmd := exec.CommandContext(ctx, "git", "apply", "-p1", abs)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git apply %s: %v\n%s(regenerate the mutant against the current executor)", patch, err, out)
			}
		}
		var outs []outcome
		for _, s := range steps {
			cmd := exec.CommandContext(ctx, "go", s.args...)
			cmd.Dir = dir
			var buf bytes.Buffer
			cmd.Stdout, cmd.Stderr = &buf, &buf
			start := time.Now()
			err := cmd.Run()
			outs = append(outs, outcome{failed: err != nil, output: buf.String()})
			t.Logf("%s: %s in %v", s.name, map[bool]string{true: "FAIL", false: "ok"}[err != nil], time.Since(start).Round(time.Second))
			if done(outs) {
				break
			}
		}
		return outs
	}
	t.Run("unmutated", func(t *testing.T) {
		for i, o := range suite(t, "", func([]outcome) bool { return false }) {
			if o.failed {
				t.Fatalf("%s fails without a mutant, so it cannot tell one: %s", steps[i].name, firstError(o.output))
			}
		}
	})
	var table strings.Builder
	killed := 0
	for _, p := range patches {
		name := strings.TrimSuffix(filepath.Base(p), ".patch")
		text, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var musts []string
		for _, l := range strings.Split(string(text), "\n") {
			if must, ok := strings.CutPrefix(l, "Must-catch: "); ok {
				musts = append(musts, must)
			}
		}
		t.Run(name, func(t *testing.T) {
			outs := suite(t, p, func(outs []outcome) bool {
				if *all || !slices.ContainsFunc(outs, func(o outcome) bool { return o.failed }) {
					return false
				}
				for _, must := range musts {
					if mustCatch(must, outs) != nil {
						return false
					}
				}
				return true
			})
			var caught []string
			for i, o := range outs {
				if o.failed {
					caught = append(caught, fmt.Sprintf("%s: %s", steps[i].name, firstError(o.output)))
				}
			}
			fmt.Fprintf(&table, "%s\n", name)
			for _, c := range caught {
				fmt.Fprintf(&table, "    caught by %s\n", c)
			}
			if len(caught) == 0 {
				fmt.Fprintf(&table, "    SURVIVED\n")
				t.Errorf("mutant %s survived every check", name)
				return
			}
			killed++
			for _, must := range musts {
				if err := mustCatch(must, outs); err != nil {
					t.Errorf("mutant %s: %v", name, err)
				}
			}
		})
	}
	t.Logf("mutation score: %d of %d mutants caught\n%s", killed, len(patches), table.String())
}

// TestMutantsApply checks, fast and without -mutants, that every mutant still
// applies to the tree: a change to the executor that moves a patch's context
// would otherwise surface only in the nightly mutants job.
func TestMutantsApply(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found: cannot check the patches")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	patches, err := filepath.Glob("testdata/*.patch")
	if err != nil || len(patches) == 0 {
		t.Fatalf("no mutants in testdata/ (%v)", err)
	}
	for _, p := range patches {
		abs, _ := filepath.Abs(p)
		cmd := exec.Command("git", "apply", "--check", "-p1", abs)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("git apply --check %s: %v\n%s(regenerate the mutant against the current executor: apply it by hand, fix the edit, git diff > %s)", p, err, out, p)
		}
	}
}

// mustCatch checks a Must-catch header against the steps' outcomes.
func mustCatch(must string, outs []outcome) error {
	if test, ok := strings.CutPrefix(must, "test "); ok {
		for _, o := range outs {
			if o.failed && strings.Contains(o.output, "--- FAIL: "+test) {
				return nil
			}
		}
		return fmt.Errorf("no step failed %s", test)
	}
	if must != "job" {
		return fmt.Errorf("Must-catch %q: want job or test TestName", must)
	}
	for i, o := range outs {
		if strings.HasPrefix(steps[i].name, "job ") && o.failed && epochVnode.MatchString(firstError(o.output)) {
			return nil
		}
	}
	return fmt.Errorf("no ordinary job failed with a message naming the epoch and the vnode")
}

// copyModule copies the module at root (its source, not .git or local results)
// into dir.
func copyModule(root, dir string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if rel == ".git" && !d.IsDir() { // a worktree's link to its repository
			return nil
		}
		if d.IsDir() {
			if rel == ".git" || rel == filepath.Join("results", "runs") || rel == "artifacts" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
}
