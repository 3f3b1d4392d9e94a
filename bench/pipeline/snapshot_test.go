package pipeline

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/backfill"
	"github.com/backfill-bench/backfill-bench/bench/stream"
)

// snapshotJob is a small work-driven snapshot-scan job: epochs cut every
// barrierRows snapshot rows, changes in every epoch.
func snapshotJob(rows int64, par, vnodes int, persist bool) Config {
	cfg := Default()
	cfg.Scan = backfill.Snapshot
	cfg.Rows, cfg.Par, cfg.Vnodes, cfg.Persist = rows, par, vnodes, persist
	cfg.BarrierRows, cfg.ChangesPerEpoch, cfg.ChunkSize = 500, 60, 128
	cfg.SettleWait = 100 * time.Millisecond
	return cfg
}

// replays counts the creating epochs that replayed the change log.
func replays(res *Result) int {
	n := 0
	for _, e := range res.Creating {
		if e.Replayed > 0 {
			n++
		}
	}
	return n
}

// TestSnapshotEqualsUpstream: the snapshot scan's MV equals A (Run checks it, and the
// changelog's net rows) with changes landing before and behind the scan, in both
// persist modes, at par 1 and 2, 1 and 256 vnodes, with and without iterator
// rebuilds, after a log replay of several epochs.
func TestSnapshotEqualsUpstream(t *testing.T) {
	for _, tc := range []struct {
		name        string
		par, vnodes int
		persist     bool
		rebuild     int64
	}{
		{"par1-vnodes1-off", 1, 1, false, 0},
		{"par2-vnodes256-on", 2, 256, true, 0},
		{"par2-vnodes256-off-rebuild", 2, 256, false, 300},
		{"par1-vnodes256-on-rebuild", 1, 256, true, 97},
		{"par2-vnodes16-on-rebuild", 2, 16, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := snapshotJob(6000, tc.par, tc.vnodes, tc.persist)
			cfg.RebuildRows = tc.rebuild
			res, j := runJob(t, cfg)
			if res.MVRows != j.src.Live() {
				t.Errorf("MV rows %d, A has %d", res.MVRows, j.src.Live())
			}
			if n := replays(res); n < 3 {
				t.Errorf("%d epochs of change log replayed, want several", n)
			}
			rebuilds := 0
			for _, e := range res.Creating {
				rebuilds += e.Rebuilds
			}
			if (tc.rebuild > 0) != (rebuilds > 0) {
				t.Errorf("%d iterator rebuilds with RebuildRows %d", rebuilds, tc.rebuild)
			}
			if res.Logical.Log == 0 {
				t.Error("no change-log bytes")
			}
			if tc.persist {
				checkStateRows(t, j, res)
			}
		})
	}
}

// TestSnapshotTimeDriven: the wall-clock cadence works for the snapshot scan too.
func TestSnapshotTimeDriven(t *testing.T) {
	cfg := smallJob(3000, 2, 16, true, 5)
	cfg.Scan = backfill.Snapshot
	res, _ := runJob(t, cfg)
	if len(res.Creating) < 2 || res.MVRows == 0 {
		t.Errorf("%d creating epochs, %d MV rows", len(res.Creating), res.MVRows)
	}
}

var _ = atomic.Int64{}
var _ = stream.Barrier{}
