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

// TestSnapshotRebuildInterval: with a rebuild interval the scan looks at the clock
// every 100 rows read, as the engine does (backfill.rebuildCheckRows): with an
// interval that has always passed, it rebuilds its iterators once per 100 rows,
// not at every row.
func TestSnapshotRebuildInterval(t *testing.T) {
	cfg := snapshotJob(6000, 2, 16, true)
	cfg.RebuildInterval = time.Nanosecond
	res, _ := runJob(t, cfg)
	rebuilds := 0
	for _, e := range res.Creating {
		rebuilds += e.Rebuilds
	}
	if most := int(res.SnapshotRows / 100); rebuilds < most/2 || rebuilds > most {
		t.Errorf("%d iterator rebuilds in %d rows read with a 1 ns interval, want about one per 100 rows (%d)", rebuilds, res.SnapshotRows, most)
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

// TestSnapshotCadenceIsDeterministic: cut by work, a snapshot-scan job does the same
// work in every run: the same upstream epochs and changes, the same creating epochs
// with the same rows, replays and lags, the same logical bytes.
func TestSnapshotCadenceIsDeterministic(t *testing.T) {
	cfg := snapshotJob(8000, 2, 16, true)
	cfg.RebuildRows = 700
	var runs []*Result
	for range 2 {
		res, _ := runJob(t, cfg)
		runs = append(runs, res)
	}
	a, b := runs[0], runs[1]
	if len(a.Epochs) != len(b.Epochs) || len(a.Creating) != len(b.Creating) {
		t.Fatalf("%d upstream and %d creating epochs, then %d and %d", len(a.Epochs), len(a.Creating), len(b.Epochs), len(b.Creating))
	}
	// 8 000 rows at 500 an epoch: 16 epochs of snapshot, one that carries the
	// finished parts, then about twice that many replays.
	if n := len(a.Creating); n < 40 || n > 60 {
		t.Errorf("%d creating epochs, want about 50", n)
	}
	for i := range a.Epochs {
		ea, eb := a.Epochs[i], b.Epochs[i]
		if ea.Epoch != eb.Epoch || ea.Changes != eb.Changes || ea.UpstreamRows != eb.UpstreamRows || ea.SnapshotRows != eb.SnapshotRows {
			t.Errorf("upstream epoch %d: %+v, then %+v", i, ea, eb)
		}
	}
	for i := range a.Creating {
		ea, eb := a.Creating[i], b.Creating[i]
		if ea.SnapshotRows != eb.SnapshotRows || ea.UpstreamRows != eb.UpstreamRows || ea.StateRows != eb.StateRows ||
			ea.Replayed != eb.Replayed || ea.Lag != eb.Lag || ea.Rebuilds != eb.Rebuilds {
			t.Errorf("creating epoch %d: %+v, then %+v", i, ea, eb)
		}
		if i < 16 && ea.SnapshotRows != 500 {
			t.Errorf("creating epoch %d read %d snapshot rows, want 500", i, ea.SnapshotRows)
		}
	}
	if a.Logical != b.Logical {
		t.Errorf("logical bytes %+v, then %+v", a.Logical, b.Logical)
	}
	if wa, wb := a.FS.Bytes[0], b.FS.Bytes[0]; wa != wb {
		t.Errorf("WAL bytes %d, then %d", wa, wb)
	}
}

// TestSnapshotUpstreamDoesNotWaitForCreatingJob: the upstream runs its own barriers.
// The creating job's first barrier is held until the upstream has committed five
// epochs more: with coupled barriers that would never happen.
func TestSnapshotUpstreamDoesNotWaitForCreatingJob(t *testing.T) {
	cfg := smallJob(3000, 2, 16, true, 7)
	cfg.Scan = backfill.Snapshot
	var committed atomic.Int64
	cfg.OnEvent = func(e Event) {
		if e.Kind == EventCommitted {
			committed.Add(1)
		}
	}
	var held atomic.Bool
	cfg.CreatingDelay = func(actor int, b *stream.Barrier) {
		if b.Epoch.Curr != 1 {
			return
		}
		deadline := time.Now().Add(20 * time.Second)
		for committed.Load() < 5 {
			if time.Now().After(deadline) {
				t.Errorf("actor %d: the upstream committed %d epochs while the creating job held its first barrier", actor, committed.Load())
				return
			}
			time.Sleep(time.Millisecond)
		}
		held.Store(true)
	}
	res, _ := runJob(t, cfg)
	if !held.Load() {
		t.Error("the creating job's first barrier was never held")
	}
	if res.Creating[0].Latency < res.Epochs[0].Latency {
		t.Errorf("held creating epoch 1 took %v, the upstream's first %v", res.Creating[0].Latency, res.Epochs[0].Latency)
	}
}

// TestSnapshotLagHoldsUpstream: while the creating job replays the change log
// slowly, the upstream (whose barriers would come 6 times as often) is held back by
// the lag limit: the lag never grows past the one the log phase began with, and
// the upstream commits at most about one epoch for two replayed, so the job ends.
func TestSnapshotLagHoldsUpstream(t *testing.T) {
	cfg := smallJob(2000, 2, 16, false, 11)
	cfg.Scan = backfill.Snapshot
	cfg.BarrierInterval = 5 * time.Millisecond * raceSlowdown
	cfg.ChangeEpochs = 0 // changes never stop: only the limit lets the replay catch up
	cfg.CreatingDelay = func(_ int, b *stream.Barrier) {
		if b.Replay > 0 {
			time.Sleep(6 * cfg.BarrierInterval)
		}
	}
	res, _ := runJob(t, cfg)
	var first *EpochTrace
	n := 0
	for i, e := range res.Creating {
		if e.Replayed == 0 {
			continue
		}
		if first == nil {
			first = &res.Creating[i]
		}
		n++
		if e.Lag > first.Lag+1 {
			t.Errorf("replay of epoch %d: lag %d, past the %d the log phase began with", e.Replayed, e.Lag, first.Lag)
		}
	}
	if first == nil {
		t.Fatal("no change log replayed")
	}
	if n < 6 {
		t.Fatalf("%d epochs replayed, want several", n)
	}
	var last EpochTrace
	for _, e := range res.Creating {
		if e.Replayed > 0 {
			last = e
		}
	}
	after := 0 // the join lets the upstream's held epochs through: count up to it
	for _, e := range res.Epochs {
		if e.Committed().After(first.Committed()) && e.Committed().Before(last.Committed()) {
			after++
		}
	}
	if after > n/2+3 {
		t.Errorf("the upstream committed %d epochs during %d replays, want at most about one per two", after, n)
	}
}

// TestSnapshotSlowCreatingJob: a slower creating job raises its own barrier latency
// and its lag, not the upstream's barrier latency while it reads its snapshot (in
// the log phase the lag limit holds the upstream back on purpose).
func TestSnapshotSlowCreatingJob(t *testing.T) {
	run := func(delay time.Duration) *Result {
		cfg := smallJob(3000, 2, 16, true, 13)
		cfg.Scan = backfill.Snapshot
		cfg.BarrierInterval = 10 * time.Millisecond * raceSlowdown
		cfg.SnapshotRateLimit = 0
		cfg.CreatingDelay = func(_ int, b *stream.Barrier) { time.Sleep(delay) }
		res, _ := runJob(t, cfg)
		return res
	}
	fast, slow := run(0), run(40*time.Millisecond*raceSlowdown) // slower than the upstream's barriers, race or not
	lagMax := func(r *Result) int64 {
		m := int64(0)
		for _, e := range r.Creating {
			m = max(m, e.Lag)
		}
		return m
	}
	cf, cs := BarrierLatency(fast.Creating, 0.5), BarrierLatency(slow.Creating, 0.5)
	uf, us := BarrierLatency(snapshotPhase(fast), 0.5), BarrierLatency(snapshotPhase(slow), 0.5)
	t.Logf("creating p50 %v → %v, upstream p50 %v → %v, lag max %d → %d", cf, cs, uf, us, lagMax(fast), lagMax(slow))
	if cs < cf+30*time.Millisecond {
		t.Errorf("creating-job barrier p50 %v → %v with 40 ms more per barrier", cf, cs)
	}
	if lagMax(slow) <= lagMax(fast) {
		t.Errorf("lag max %d → %d with a slower creating job", lagMax(fast), lagMax(slow))
	}
	if us > uf+20*time.Millisecond {
		t.Errorf("upstream barrier p50 %v → %v: the upstream waited for the creating job", uf, us)
	}
}

// snapshotPhase are the upstream epochs committed before the creating job began to
// replay the change log.
func snapshotPhase(r *Result) []EpochTrace {
	var end time.Time
	for _, e := range r.Creating {
		if e.Replayed > 0 {
			end = e.Injected
			break
		}
	}
	var out []EpochTrace
	for _, e := range r.Epochs {
		if e.Committed().Before(end) {
			out = append(out, e)
		}
	}
	return out
}
