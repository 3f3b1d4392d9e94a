package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCompareFilesGolden compares the fixture results files and checks the printed
// table, verdict.json and report.md against golden files recorded before the
// harness was split into packages. Paths and the machine line are normalized.
func TestCompareFilesGolden(t *testing.T) {
	files := filepath.Join("..", "..", "harness", "judge", "testdata", "compare")
	out := t.TempDir()
	// The fixture's files are whole-job figures: judge rows/s and sec/op as well.
	stdout, _, err := runArgs("compare", "--no-plots", "--threshold", "rows/s=3%,sec/op=3%,barrier-p99-sec=10%", "--out", out, filepath.Join(files, "base.txt"), filepath.Join(files, "head.txt"))
	if exitCode(err) != 1 {
		t.Fatalf("exit %d (%v), want 1 (regression)", exitCode(err), err)
	}
	machine := regexp.MustCompile("(?m)^Machine: .*$")
	normalize := func(s string) string {
		s = strings.ReplaceAll(s, out, "OUT")
		s = strings.ReplaceAll(s, files, "FILES")
		return machine.ReplaceAllString(s, "Machine: M")
	}
	report, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	verdict, err := os.ReadFile(filepath.Join(out, "verdict.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]string{
		"compare-files.stdout":       stdout,
		"compare-files.report.md":    string(report),
		"compare-files.verdict.json": string(verdict),
	} {
		got = normalize(got)
		path := filepath.Join("testdata", name)
		if *update {
			os.WriteFile(path, []byte(got), 0o644)
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to create)", err)
		}
		if got != string(want) {
			os.WriteFile(path+".got", []byte(got), 0o644)
			t.Errorf("%s differs from its golden file (got in %s.got)", name, path)
		}
	}
}
