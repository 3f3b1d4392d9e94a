package bench

import (
	"github.com/backfill-bench/backfill-bench/bench/meterfs"
	"github.com/backfill-bench/backfill-bench/bench/pipeline"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/jobtrace"
)

// NewTrace makes the trace of one job of the cell.
func NewTrace(c contract.Cell, r *pipeline.Result) jobtrace.Trace {
	t := jobtrace.Trace{
		Cell: c.Name(), WallSec: r.Wall.Seconds(), LoadSec: r.Load.Seconds(),
		SnapshotRows: r.SnapshotRows, UpstreamRows: r.UpstreamRows,
		FSBytes: map[string]int64{}, FSSyncs: map[string]int64{},
		Logical: map[string]int64{"upstream": r.Logical.Upstream, "mv": r.Logical.MV, "state": r.Logical.State},
	}
	if r.Logical.Log > 0 {
		t.Logical["log"] = r.Logical.Log
	}
	for _, e := range r.Creating {
		t.Creating = append(t.Creating, jobtrace.TraceCreatingEpoch{
			Epoch: e.Epoch, AtSec: e.Injected.Sub(r.Epochs[0].Injected).Seconds(), LatencySec: e.Latency.Seconds(),
			SnapshotRows: e.SnapshotRows, UpstreamRows: e.UpstreamRows, Replayed: e.Replayed, LagEpochs: e.Lag, Rebuilds: e.Rebuilds,
		})
	}
	if p := r.Persist(); p.Total() > 0 {
		t.Persist = map[string]int64{"logical": p.Logical, "wal": p.WAL, "flush": p.Flush, "compaction": p.Compaction}
	}
	for _, cat := range meterfs.Categories() {
		t.FSBytes[cat.String()] = r.FS.Bytes[cat]
		t.FSSyncs[cat.String()] = r.FS.Syncs[cat]
	}
	for _, e := range r.Epochs {
		phases := map[string]float64{
			"open": e.Phases.Open.Seconds(), "scan": e.Phases.Scan.Seconds(),
			"idle": e.Phases.Idle.Seconds(), "barrier": e.Phases.Barrier.Seconds(),
			"build": e.Build.Seconds(), "commit": e.Commit.Seconds(),
		}
		if e.Upload > 0 {
			phases["upload"] = e.Upload.Seconds()
		}
		t.Epochs = append(t.Epochs, jobtrace.TraceEpoch{
			Epoch: e.Epoch, AtSec: e.Injected.Sub(r.Epochs[0].Injected).Seconds(), LatencySec: e.Latency.Seconds(),
			Checkpoint: e.Checkpoint, SnapshotRows: e.SnapshotRows, UpstreamRows: e.UpstreamRows,
			ReadLag: e.ReadLag, Buffered: e.Buffered,
			LSM: &jobtrace.TraceLSM{
				L0Files: e.LSM.L0Files, L0Sublevels: e.LSM.L0Sublevels, CompactionDebt: e.LSM.CompactionDebt,
				Memtables: e.LSM.Memtables, ReadAmp: e.LSM.ReadAmp, Stalls: e.LSM.Stalls, StallSec: e.LSM.StallTime.Seconds(),
				StallBytes:     e.LSM.StallBytes,
				MemTableStalls: e.LSM.MemTableStalls, MemTableStallSec: e.LSM.MemTableStallTime.Seconds(),
				L0Stalls: e.LSM.L0Stalls, L0StallSec: e.LSM.L0StallTime.Seconds(),
			},
			Phases: phases,
		})
	}
	return t
}
