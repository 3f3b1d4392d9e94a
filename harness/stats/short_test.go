package stats

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backfill-bench/backfill-bench/contract"
)

// TestShortCellsAreFlagged: a cell with fewer regular barriers than a steady state
// needs is named, with how to lengthen it.
func TestShortCellsAreFlagged(t *testing.T) {
	line := func(barriers int) string {
		return fmt.Sprintf("BenchmarkBackfill/profile=mem/workload=narrow/rows=30000/persist=off/scan=merged/barrier=100ms/par=2-2 1 100 ns/op %d barriers\n", barriers)
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "r.txt")
	os.WriteFile(f, []byte(line(7)+line(7)), 0o644)
	results, _, err := contract.ReadFiles(f)
	if err != nil {
		t.Fatal(err)
	}
	notes := ShortCells(results)
	if len(notes) != 1 || !strings.Contains(notes[0], "7 regular barriers") || !strings.Contains(notes[0], "--barrier (like 294rows)") {
		t.Errorf("notes %q", notes)
	}
	os.WriteFile(f, []byte(line(119)), 0o644)
	if results, _, _ = contract.ReadFiles(f); len(ShortCells(results)) != 0 {
		t.Errorf("a cell of 119 regular barriers flagged: %q", ShortCells(results))
	}
}
