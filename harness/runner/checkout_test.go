package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/rates"
)

// TestChangedPaths: the files a commit changed since it left base, and those the
// working tree changed; refs that look like options are refs, not options.
func TestChangedPaths(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, body string) {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	git("init", "-q", "-b", "main")
	write("a.go", "a")
	write("bench/storage/store.go", "s")
	git("add", ".")
	git("commit", "-q", "-m", "base")
	git("checkout", "-q", "-b", "change")
	write("bench/storage/store.go", "s2")
	git("commit", "-q", "-am", "change")
	write("a.go", "a2") // uncommitted
	got, err := ChangedPaths(context.Background(), dir, "main", "change")
	if err != nil || strings.Join(got, " ") != "bench/storage/store.go" {
		t.Errorf("main...change: %v, %v", got, err)
	}
	got, err = ChangedPaths(context.Background(), dir, "main", "")
	if err != nil || strings.Join(got, " ") != "a.go bench/storage/store.go" {
		t.Errorf("main vs the working tree: %v, %v", got, err)
	}
	if _, err := ChangedPaths(context.Background(), dir, "--output=/tmp/x", ""); err == nil {
		t.Error("a ref that looks like an option was taken")
	}
}

// TestFitRoom: a cell whose tables would not fit in 80 % of the memory (in-memory
// profiles) or of the free disk (disk profiles) is left out, saying what it needs
// and what to do; unknown room skips nothing.
func TestFitRoom(t *testing.T) {
	set, err := profile.NewSet(nil)
	if err != nil {
		t.Fatal(err)
	}
	cell := func(prof string, rows int64) contract.Cell {
		return contract.Cell{Profile: prof, Workload: "narrow", Rows: rows, Scan: "merged", Barrier: rates.Cadence{Rows: 5000}, Par: 2}
	}
	cells := []contract.Cell{cell("mem", 1_000_000), cell("mem", 100_000_000), cell("ssd", 1_000_000), cell("ssd", 100_000_000)}
	room := Room{Memory: 10 << 30, Disk: func(string) (int64, error) { return 1 << 30, nil }}
	kept, skipped := FitRoom(cells, set, room, Sequential)
	if len(kept) != 2 || kept[0].Rows != 1_000_000 || kept[1].Profile != "ssd" || kept[1].Rows != 1_000_000 {
		t.Errorf("kept %v", kept)
	}
	if len(skipped) != 2 || !strings.Contains(skipped[0], "of memory") || !strings.Contains(skipped[0], "disk profile") || !strings.Contains(skipped[1], "free disk at") {
		t.Errorf("skipped %q", skipped)
	}
	if kept, _ := FitRoom(cells, set, Room{}, Sequential); len(kept) != len(cells) {
		t.Errorf("unknown room kept %d of %d cells", len(kept), len(cells))
	}
}
