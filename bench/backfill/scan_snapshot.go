package backfill

import (
	"context"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/stream"
)

// snapshotScan is the snapshot scan (RisingWave's snapshot backfill, the default
// since #24116; see README "Snapshot backfill" for the engine files each rule
// comes from):
//
//   - it reads one committed snapshot of A, the one at the epoch it starts from, per
//     vnode (interleaved, a position per vnode, as the per-vnode scan's progress),
//     rebuilding its iterators every RebuildRows rows or RebuildInterval rather than
//     at each barrier; its barriers are the creating job's own, and its parts commit
//     apart from the upstream's;
//   - once its snapshot is read, it replays the upstream's change log one upstream
//     epoch per barrier (Barrier.Replay), reading it from the committed log table;
//   - once it has caught up, the job joins the upstream: its barriers are the
//     upstream's again and upstream chunks come straight in, as after any backfill.
//
// The pipeline decides when each phase begins (as the engine's meta does); the
// executor only acts on the barriers it is given.
type snapshotScan struct {
	e *Executor
	vnodeProgress
	// When its iterators were opened, the rows read since, and the upstream epoch
	// its MV holds (the snapshot's, then each replayed one's).
	openedAt  time.Time
	sinceOpen int64
	dataEpoch uint64
}

func newSnapshotScan(e *Executor) strategy {
	return &snapshotScan{e: e, vnodeProgress: newVnodeProgress(e)}
}

// start pins the committed snapshot the scan reads for its whole snapshot phase
// and opens its iterators.
func (s *snapshotScan) start() error {
	s.e.snap = s.e.env.Store.Latest()
	s.dataEpoch = s.e.snap.Epoch
	return s.openIters()
}

// openIters (re)opens one iterator per unfinished vnode after its position, on the
// pinned snapshot.
func (s *snapshotScan) openIters() error {
	e := s.e
	if e.scan != nil {
		e.scan.Close()
	}
	var err error
	if e.scan, err = s.openIter(e.snap.Snap, nil); err != nil {
		e.scan = nil
		return fmt.Errorf("backfill: actor %d: open the snapshot scan of epoch %d: %w", e.cfg.Actor, e.snap.Epoch, err)
	}
	s.openedAt, s.sinceOpen = time.Now(), 0
	return nil
}

// rebuildCheckRows: the scan looks at the clock for its rebuild interval every so many
// rows, as the engine (CHECK_TIMEOUT_PERIOD, src/storage/src/store/auto_rebuild.rs).
const rebuildCheckRows = 100

// scanned reopens the iterators once they have returned RebuildRows rows or been
// open RebuildInterval, so that they pin no old sstables or memtables for long (the
// engine's snapshot_iter_rebuild_interval). Rows already read stay in the chunk;
// the new iterators start after them.
func (s *snapshotScan) scanned() error {
	e := s.e
	if e.scan == nil || e.finished {
		return nil
	}
	s.sinceOpen++
	due := e.cfg.RebuildRows > 0 && s.sinceOpen >= e.cfg.RebuildRows ||
		e.cfg.RebuildInterval > 0 && s.sinceOpen%rebuildCheckRows == 0 && time.Since(s.openedAt) >= e.cfg.RebuildInterval
	if !due {
		return nil
	}
	if err := s.openIters(); err != nil { // the rate limiter keeps its state
		return err
	}
	e.part.Rebuilds++
	return nil
}

// upstream: the creating job's barriers are its own; upstream chunks come in only
// once it has joined the upstream, after its scan.
func (s *snapshotScan) upstream(*stream.Chunk) {}

// barrier handles a creating-job barrier of the snapshot phase, one that replays an
// upstream epoch's change log, or, once the job has joined the upstream, an
// upstream barrier.
func (s *snapshotScan) barrier(ctx context.Context, b *stream.Barrier) error {
	e := s.e
	if b.Replay > 0 {
		if !e.finished {
			return fmt.Errorf("backfill: actor %d: asked to replay epoch %d before its snapshot was read", e.cfg.Actor, b.Replay)
		}
		if err := s.replay(ctx, b.Replay); err != nil {
			return err
		}
	}
	return e.emitSnapshotChunk()
}

// persist writes the state rows whose progress changed; the engine records each
// vnode's replayed epoch in its state row, so a replay changes them all.
func (s *snapshotScan) persist(b *stream.Barrier) error {
	if b.Replay > 0 {
		for i := range s.vdirty {
			s.vdirty[i] = true
		}
	}
	return s.vnodeProgress.persist(b)
}

// next: the iterators stay open across barriers.
func (s *snapshotScan) next(*stream.Barrier) error {
	s.e.scanFrom = time.Now()
	return nil
}

// replay applies the upstream's change log of epoch, for this actor's vnodes, to B
// in the epoch's writes, as the upstream sent it. It waits for the epoch's commit
// first, as the engine's log read waits for the committed epoch.
func (s *snapshotScan) replay(ctx context.Context, epoch uint64) error {
	e := s.e
	if epoch != s.dataEpoch+1 {
		return fmt.Errorf("backfill: actor %d: replay of epoch %d after epoch %d: the change log must be replayed in order", e.cfg.Actor, epoch, s.dataEpoch)
	}
	if e.env.WaitCommitted != nil {
		if err := e.env.WaitCommitted(ctx, epoch); err != nil {
			return fmt.Errorf("backfill: actor %d: replay of epoch %d: %w", e.cfg.Actor, epoch, err)
		}
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
		op, r, err := stream.DecodeLogValue(it.Value())
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
	s.dataEpoch = epoch
	return flush()
}
