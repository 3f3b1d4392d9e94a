package sides

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestFailedIn: the head's failed jobs come from go test's "--- FAIL" lines in a
// results file and, for a results directory, from its failures.txt (cells and runs
// after the cells alike).
func TestFailedIn(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "results.txt"), []byte("BenchmarkScan-2 1 100 ns/op\n--- FAIL: BenchmarkMerge-2\n    x_test.go:1: boom\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "failures.txt"), []byte("run 3 (round 2, head) BenchmarkBackfill/profile=mem/rows=1: exit status 2\n    panic: x\nafter the cells (round 1) BenchmarkRecovery/profile=mem: no result in the output\n"), 0o644)
	got, err := Failed(Parse(dir))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Merge-2", "Backfill/profile=mem/rows=1", "Recovery/profile=mem"}
	if !slices.Equal(got, want) {
		t.Errorf("failed %q, want %q", got, want)
	}
	if got, _ := Failed(Parse(filepath.Join(dir, "results.txt"))); !slices.Equal(got, want[:1]) {
		t.Errorf("a file: failed %q, want %q", got, want[:1])
	}
}

// TestParse: an existing directory is its results.txt, an existing file itself,
// anything else a ref; a ref that reads as a path is refused.
func TestParse(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "r.txt")
	os.WriteFile(file, []byte("BenchmarkScan-2 1 100 ns/op\n"), 0o644)
	for _, tc := range []struct {
		arg        string
		want       Spec
		label, bad string
	}{
		{"", Spec{}, "working-tree", ""},
		{dir, Spec{Arg: dir, File: filepath.Join(dir, "results.txt")}, dir, ""},
		{file, Spec{Arg: file, File: file}, file, ""},
		{"main", Spec{Arg: "main", Ref: "main"}, "main", ""},
		{"missing.txt", Spec{Arg: "missing.txt", Ref: "missing.txt"}, "missing.txt", "no such results file"},
		{"./gone", Spec{Arg: "./gone", Ref: "./gone"}, "./gone", "no such results file"},
	} {
		s := Parse(tc.arg)
		if s != tc.want || s.Label() != tc.label {
			t.Errorf("Parse(%q) = %+v labelled %q, want %+v labelled %q", tc.arg, s, s.Label(), tc.want, tc.label)
		}
		if err := s.Check(); (err == nil) != (tc.bad == "") || err != nil && !strings.Contains(err.Error(), tc.bad) {
			t.Errorf("Parse(%q).Check() = %v, want %q", tc.arg, err, tc.bad)
		}
	}
}
