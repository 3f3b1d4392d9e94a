package contract_test

import (
	"bufio"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backfill-bench/backfill-bench/contract"
)

var update = flag.Bool("update", false, "rewrite testdata/names.golden")

// namesCells are cells with each dimension at its default and away from it:
// every dimension with a default varied alone, then all away at once.
func namesCells(t *testing.T) []contract.Cell {
	base := [][2]string{
		{"profile", "mem"}, {"workload", "bid+zipfian:1.2+update-heavy"}, {"rows", "1000"},
		{"persist", "off,on"}, {"scan", "merged,per-vnode,snapshot"}, {"barrier", "1s,50krows"}, {"par", "2"},
	}
	away := [][2]string{
		{"changes", "500/epoch"}, {"limit", "200k/s..50k/s@50%"}, {"read", "checkpoint"},
		{"ckpt", "10"}, {"vnodes", "4"}, {"chunk", "1024"},
	}
	var cells []contract.Cell
	for i := range len(away) + 1 {
		var m contract.Matrix
		sets := append([][2]string{}, base...)
		if i < len(away) {
			sets = append(sets, away[i])
		} else {
			sets = append(sets, away...)
		}
		for _, dv := range sets {
			if err := m.Set(dv[0], dv[1]); err != nil {
				t.Fatal(err)
			}
		}
		cells = append(cells, m.Cells()...)
	}
	return cells
}

// TestNamesUnchanged: the names of cells, recoveries and baselines, and the bench
// binary's arguments, are the ones the contract made before the dimension table
// (testdata/names.golden was written by the code before it), so results
// history still parses and compares.
func TestNamesUnchanged(t *testing.T) {
	var b strings.Builder
	for _, c := range namesCells(t) {
		b.WriteString(c.Name() + "\n")
		b.WriteString("  " + c.RecoveryName("25%") + "\n")
		b.WriteString("  " + c.RawCopyName() + "\n")
		b.WriteString("  " + c.ScanOnlyName() + "\n")
		b.WriteString("  " + strings.Join(c.Args("t.jsonl", []string{"/p.json"}), " ") + "\n")
	}
	golden := filepath.Join("testdata", "names.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("line %d:\n got %s\nwant %s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%d lines, want %d", len(gl), len(wl))
	}
}

// TestCommittedResultsParse: every BenchmarkBackfill name in the repository's
// results files (results/history and the testdata fixtures) parses, and formats
// back to itself.
func TestCommittedResultsParse(t *testing.T) {
	n := 0
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".txt") {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			full, _, _ := strings.Cut(sc.Text(), " ")
			name, ok := strings.CutPrefix(full, "BenchmarkBackfill/")
			if !ok {
				continue
			}
			if i := strings.LastIndexByte(name, '-'); i > 0 && !strings.Contains(name[i:], "=") && !strings.Contains(name[i:], "/") {
				name = name[:i] // the GOMAXPROCS suffix
			}
			c, err := contract.ParseName(name)
			if err != nil {
				t.Errorf("%s: %v", path, err)
				continue
			}
			if c.Name() != name {
				t.Errorf("%s: %s formats back as %s", path, name, c.Name())
			}
			n++
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no BenchmarkBackfill results found")
	}
}
