package backfill

import (
	"context"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/scaniter"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/stream"
)

// The snapshot scan (RisingWave's snapshot backfill, the default since #24116; see
// README "Snapshot backfill" for the engine files each rule comes from):
//
//   - it reads one committed snapshot of A, the one at the epoch it starts from, per
//     vnode (interleaved, a position per vnode), rebuilding its iterators every
//     RebuildRows rows or RebuildInterval rather than at each barrier; its barriers
//     are the creating job's own, and its parts commit apart from the upstream's;
//   - once its snapshot is read, it replays the upstream's change log one upstream
//     epoch per barrier (Barrier.Replay), reading it from the committed log table;
//   - once it has caught up, the job joins the upstream: its barriers are the
//     upstream's again and upstream chunks come straight in, as after any backfill.
//
// The pipeline decides when each phase begins (as the engine's meta does); the
// executor only acts on the barriers it is given.

// openSnapshot pins the committed snapshot the scan reads for its whole snapshot
// phase and opens its iterators.
func (e *Executor) openSnapshot() error {
	e.snap = e.env.Store.Latest()
	e.dataEpoch = e.snap.Epoch
	return e.openSnapshotIters()
}

// openSnapshotIters (re)opens one iterator per unfinished vnode after its position,
// on the pinned snapshot.
func (e *Executor) openSnapshotIters() error {
	if e.scan != nil {
		e.scan.Close()
	}
	var err error
	e.vscan, err = scaniter.NewVnodeIter(e.snap.Snap, nil, storage.TableUpstream, e.cfg.Vnodes, e.vposKey, e.vdone)
	if err != nil {
		e.scan, e.vscan = nil, nil
		return fmt.Errorf("backfill: actor %d: open the snapshot scan of epoch %d: %w", e.cfg.Actor, e.snap.Epoch, err)
	}
	e.scan = e.vscan
	e.markCompleted()
	e.openedAt, e.sinceOpen = time.Now(), 0
	return nil
}

// maybeRebuild reopens the iterators once they have returned RebuildRows rows or
// been open RebuildInterval, so that they pin no old sstables or memtables for
// long (the engine's snapshot_iter_rebuild_interval). Rows already read stay in the
// chunk; the new iterators start after them.
func (e *Executor) maybeRebuild() error {
	if e.scan == nil || e.finished {
		return nil
	}
	e.sinceOpen++
	due := e.cfg.RebuildRows > 0 && e.sinceOpen >= e.cfg.RebuildRows ||
		e.cfg.RebuildInterval > 0 && time.Since(e.openedAt) >= e.cfg.RebuildInterval
	if !due {
		return nil
	}
	if err := e.openSnapshotIters(); err != nil { // the rate limiter keeps its state
		return err
	}
	e.part.Rebuilds++
	return nil
}

// snapshotBarrier handles a barrier of the snapshot scan: a creating-job barrier of
// the snapshot phase, one that replays an upstream epoch's change log, or, once the
// job has joined the upstream, an upstream barrier.
func (e *Executor) snapshotBarrier(ctx context.Context, b *stream.Barrier) (done bool, err error) {
	start := time.Now()
	switch {
	case e.full:
		e.part.Phases.Idle = start.Sub(e.fullAt)
	case e.scan != nil && !e.scanFrom.IsZero():
		e.part.Phases.Scan = start.Sub(e.scanFrom)
	}
	if b.Replay > 0 {
		if !e.finished {
			return false, fmt.Errorf("backfill: actor %d: asked to replay epoch %d before its snapshot was read", e.cfg.Actor, b.Replay)
		}
		if err := e.replay(b.Replay); err != nil {
			return false, err
		}
	}
	if err := e.emitSnapshotChunk(); err != nil {
		return false, err
	}
	if e.cfg.Persist {
		start := time.Now()
		if b.Replay > 0 {
			// The engine records each vnode's replayed epoch in its state row.
			for i := range e.vdirty {
				e.vdirty[i] = true
			}
		}
		if err := e.persist(); err != nil {
			return false, err
		}
		e.part.StateTime = time.Since(start)
	}
	if err := e.deliver(ctx, b, start); err != nil {
		return false, err
	}
	if b.Final {
		if !e.finished || b.Creating {
			return true, fmt.Errorf("backfill: actor %d: final barrier %d before the job joined its upstream", e.cfg.Actor, b.Epoch.Curr)
		}
		return true, nil
	}
	e.state = e.env.Store.DB.NewBatch()
	e.scanFrom = time.Now()
	return false, nil
}

// replay applies the upstream's change log of epoch, for this actor's vnodes, to B
// in the epoch's writes, as the upstream sent it. The epoch is committed: the
// pipeline replays only committed epochs, as the engine reads the committed log.
func (e *Executor) replay(epoch uint64) error {
	if epoch != e.dataEpoch+1 {
		return fmt.Errorf("backfill: actor %d: replay of epoch %d after epoch %d: the change log must be replayed in order", e.cfg.Actor, epoch, e.dataEpoch)
	}
	snap := e.env.Store.Latest()
	defer snap.Release()
	if snap.Epoch < epoch {
		return fmt.Errorf("backfill: actor %d: replay of epoch %d, which is not committed (latest %d)", e.cfg.Actor, epoch, snap.Epoch)
	}
	lo, hi := storage.LogBounds(epoch, e.cfg.Vnodes[0], e.cfg.Vnodes[len(e.cfg.Vnodes)-1])
	it, err := snap.Snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return fmt.Errorf("backfill: actor %d: read the change log of epoch %d: %w", e.cfg.Actor, epoch, err)
	}
	defer it.Close()
	c := stream.NewChunk(e.cfg.ChunkSize)
	flush := func() error {
		e.part.UpstreamRows += int64(c.Len())
		err := e.materialize(c)
		c = stream.NewChunk(e.cfg.ChunkSize)
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		op, r, err := DecodeLogValue(it.Value())
		if err != nil {
			return fmt.Errorf("backfill: actor %d: change log key %x: %w", e.cfg.Actor, it.Key(), err)
		}
		c.Append(op, r)
		if c.Len() >= e.cfg.ChunkSize {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("backfill: actor %d: read the change log of epoch %d: %w", e.cfg.Actor, epoch, err)
	}
	e.dataEpoch = epoch
	return flush()
}

// AppendLogValue appends the change-log value of a change: its op, then the row.
func AppendLogValue(dst []byte, op stream.Op, r row.Row) []byte {
	return row.AppendValue(append(dst, byte(op)), r)
}

// DecodeLogValue decodes a value written by AppendLogValue into a new row.
func DecodeLogValue(v []byte) (stream.Op, row.Row, error) {
	if len(v) == 0 {
		return 0, nil, fmt.Errorf("empty change-log value")
	}
	op := stream.Op(v[0])
	if op > stream.UpdateInsert {
		return 0, nil, fmt.Errorf("change-log op %d unknown", v[0])
	}
	r, err := row.DecodeValue(nil, v[1:])
	return op, r, err
}
