package testbed

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
