// Package ci holds the nightly and pull-request workflows and the scripts they call;
// its tests lint the workflows and run the scripts on a tiny matrix.
package ci

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestWorkflowsPassActionlint(t *testing.T) {
	out, err := exec.Command("go", "tool", "actionlint", "-no-color", "nightly.yml", "pr.yml").CombinedOutput()
	if err != nil {
		t.Fatalf("actionlint: %v\n%s", err, out)
	}
	// And it does catch a broken workflow.
	broken := filepath.Join(t.TempDir(), "broken.yml")
	os.WriteFile(broken, []byte("on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.nope }}\n"), 0o644)
	if out, err := exec.Command("go", "tool", "actionlint", "-no-color", broken).CombinedOutput(); err == nil {
		t.Errorf("actionlint passed a broken workflow:\n%s", out)
	}
}

// benchrun builds the CLI once for the scripts.
func benchrun(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "benchrun")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/benchrun")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build benchrun: %v\n%s", err, out)
	}
	return bin
}

func script(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if x, ok := err.(*exec.ExitError); ok {
			return string(out), x.ExitCode()
		}
		t.Fatal(err)
	}
	return string(out), 0
}

// TestNightlyScript runs the workflow's steps with a tiny matrix: two shards, then
// the record step, twice, and checks the history has two nights with their files.
func TestNightlyScript(t *testing.T) {
	if testing.Short() {
		t.Skip("runs benchmarks")
	}
	tmp := t.TempDir()
	env := []string{
		"BENCHRUN=" + benchrun(t),
		"NIGHTLY_ARGS=--profile mem --workload narrow --scan merged --rows 2000 --barrier 500rows,1000rows --count 2",
		"HISTORY=" + filepath.Join(tmp, "history"),
	}
	for night := 1; night <= 2; night++ {
		var files []string
		for _, shard := range []string{"1", "2"} {
			out := filepath.Join(tmp, "night", string(rune('0'+night)), shard)
			if log, code := script(t, env, "nightly.sh", "shard", shard+"/2", out); code != 0 {
				t.Fatalf("nightly.sh shard %s/2: exit %d\n%s", shard, code, log)
			}
			files = append(files, filepath.Join(out, "results.txt"))
		}
		log, code := script(t, env, append([]string{"nightly.sh", "record"}, files...)...)
		if code > 1 {
			t.Fatalf("nightly.sh record: exit %d\n%s", code, log)
		}
	}
	machines, _ := filepath.Glob(filepath.Join(tmp, "history", "*"))
	if len(machines) != 1 {
		t.Fatalf("history machines %v, want one", machines)
	}
	nights, _ := filepath.Glob(filepath.Join(machines[0], "*", "results.txt"))
	if len(nights) != 2 {
		t.Errorf("nights %v, want two", nights)
	}
	for _, f := range []string{"nightly.md", "alerts.json", "trends-mem.png"} {
		if _, err := os.Stat(filepath.Join(machines[0], f)); err != nil {
			t.Error(err)
		}
	}
	// Both shards' cells are in each night: 2 barriers × persist off and on, 2 rounds.
	data, _ := os.ReadFile(nights[0])
	if n := strings.Count(string(data), "\nBenchmarkBackfill/"); n != 8 {
		t.Errorf("a night has %d results, want 8", n)
	}
}

// TestPRCompareScript compares HEAD with its own merge base on a tiny matrix.
func TestPRCompareScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two commits")
	}
	out := filepath.Join(t.TempDir(), "cmp")
	env := []string{
		"BENCHRUN=" + benchrun(t),
		"COMPARE_ARGS=--workload narrow --persist off --barrier 100ms --rows 2000 --count 4 --confirm 0",
	}
	log, code := script(t, env, "pr-compare.sh", "HEAD", out)
	if code == 2 || code > 3 { // 0, 1 and 3 are verdicts; 4 rounds are often inconclusive
		t.Fatalf("pr-compare.sh: exit %d\n%s", code, log)
	}
	for _, f := range []string{"report.md", "verdict.json", "base.txt", "head.txt", "metrics.txt"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(log, "comparing HEAD") {
		t.Errorf("the script did not say what it compares:\n%s", log)
	}
}
