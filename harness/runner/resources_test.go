package runner

import (
	"strings"
	"testing"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/rates"
	"github.com/backfill-bench/backfill-bench/harness/testbed"
)

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
	room := testbed.Room{Memory: 10 << 30, Disk: func(string) (int64, error) { return 1 << 30, nil }}
	kept, skipped := FitRoom(cells, set, room, Sequential)
	if len(kept) != 2 || kept[0].Rows != 1_000_000 || kept[1].Profile != "ssd" || kept[1].Rows != 1_000_000 {
		t.Errorf("kept %v", kept)
	}
	if len(skipped) != 2 || !strings.Contains(skipped[0], "of memory") || !strings.Contains(skipped[0], "disk profile") || !strings.Contains(skipped[1], "free disk at") {
		t.Errorf("skipped %q", skipped)
	}
	if kept, _ := FitRoom(cells, set, testbed.Room{}, Sequential); len(kept) != len(cells) {
		t.Errorf("unknown room kept %d of %d cells", len(kept), len(cells))
	}
}
