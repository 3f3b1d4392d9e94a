package backfill

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/scaniter"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/stream"
)

// Read is what a scan reopened after a barrier reads (DESIGN §2.3, "Snapshot reads").
type Read int

const (
	// Uncommitted reads the epoch the barrier sealed without waiting for its commit:
	// the last committed snapshot overlaid with the sealed epochs' writes to A.
	Uncommitted Read = iota
	// Checkpoint reads the last checkpoint's snapshot merged with the upstream
	// changes the actor buffered since it.
	Checkpoint
)

// Reads are the read modes' names, as ParseRead takes them.
var Reads = []string{"uncommitted", "checkpoint"}

func (r Read) String() string { return Reads[r] }

// ParseRead returns the read mode named name.
func ParseRead(name string) (Read, error) { return parseName[Read](Reads, "read mode", name) }

// reopened is the part of the merged and per-vnode strategies they share: the scan
// is reopened at every barrier on A at the epoch the barrier ends, as the read mode
// sees it, and the upstream chunks buffered in the epoch go downstream at the
// barrier, filtered to the rows the scan has passed. The kind gives its iterator
// and its filter.
type reopened struct {
	e      *Executor
	open   func(snap *storage.Snapshot, ov *storage.Writes) (scaniter.Scan, error)
	filter func(c *stream.Chunk)

	// The writes the scan overlays on its snapshot, when they are a merge of several
	// epochs'. Read mode checkpoint: the writes to A of the upstream changes
	// received since the last checkpoint, per epoch, and those of the current one.
	overlay   storage.Writes
	sinceCkpt []bufferedEpoch
	epochToA  *storage.Writes
}

// bufferedEpoch is one epoch's upstream changes as writes to A, sorted.
type bufferedEpoch struct {
	epoch  uint64
	writes *storage.Writes
}

func (r *reopened) start() error {
	if r.e.cfg.Read == Checkpoint {
		r.epochToA = &storage.Writes{}
	}
	return r.openScan(r.e.env.Store.Committed())
}

func (r *reopened) scanned() error { return nil }

// openScan opens the scan of A at epoch after the position, as the read mode sees it.
func (r *reopened) openScan(epoch uint64) error {
	e := r.e
	e.closeScan()
	var ov *storage.Writes
	e.snap, ov = r.readView(epoch)
	var err error
	if e.scan, err = r.open(e.snap.Snap, ov); err != nil {
		e.scan = nil
		return fmt.Errorf("backfill: actor %d: open scan at epoch %d (%s read of snapshot %d): %w", e.cfg.Actor, epoch, e.cfg.Read, e.snap.Epoch, err)
	}
	e.part.ReadLag = epoch - e.snap.Epoch
	for _, b := range r.sinceCkpt {
		e.part.Buffered += int64(b.writes.Len())
	}
	return nil
}

// readView returns the snapshot (which closeScan releases) and the writes overlaid
// on it that together are A at epoch, as the read mode sees it: uncommitted, the
// latest commit and the epochs sealed since; checkpoint, the latest checkpoint and
// the changes this actor received since, which are all of them for its vnodes.
func (r *reopened) readView(epoch uint64) (*storage.EpochSnapshot, *storage.Writes) {
	if r.e.cfg.Read == Uncommitted {
		snap, sealed := r.e.env.Store.ReadUncommitted(epoch)
		return snap, r.merge(sealed)
	}
	snap := r.e.env.Store.LatestCheckpoint()
	n := 0
	for n < len(r.sinceCkpt) && r.sinceCkpt[n].epoch <= snap.Epoch {
		n++
	}
	r.sinceCkpt = slices.Delete(r.sinceCkpt, 0, n)
	ws := make([]*storage.Writes, len(r.sinceCkpt))
	for i, b := range r.sinceCkpt {
		ws[i] = b.writes
	}
	return snap, r.merge(ws)
}

// merge returns the writes of the epochs ws (oldest first) to this actor's vnodes of
// A as one sorted overlay, the later write of a key winning; one epoch's are used as
// they are.
func (r *reopened) merge(ws []*storage.Writes) *storage.Writes {
	switch len(ws) {
	case 0:
		return nil
	case 1:
		return ws[0]
	}
	vnodes := r.e.cfg.Vnodes
	lo, _ := storage.VnodeBounds(storage.TableUpstream, vnodes[0])
	_, hi := storage.VnodeBounds(storage.TableUpstream, vnodes[len(vnodes)-1])
	r.overlay.Reset()
	for _, w := range ws {
		r.overlay.Append(w, w.Search(lo), w.Search(hi))
	}
	r.overlay.Sort()
	return &r.overlay
}

// upstream records upstream chunk c, all of it, as writes to A, for checkpoint
// reads.
func (r *reopened) upstream(c *stream.Chunk) {
	if r.epochToA != nil {
		r.e.writeChunk(r.epochToA, storage.TableUpstream, c)
	}
}

// barrier reads at least one row in the epoch, keeps the epoch's writes to A for
// checkpoint reads, and sends the buffered upstream chunks downstream, filtered.
func (r *reopened) barrier(_ context.Context, b *stream.Barrier) error {
	e := r.e
	if e.scan != nil && !e.finished && e.part.SnapshotRows == 0 && !e.limit.Paused() {
		// Read at least one row per epoch, so progress never starves on short barriers.
		if err := e.scanOne(); err != nil {
			return err
		}
	}
	if r.epochToA != nil && r.epochToA.Len() > 0 {
		r.epochToA.Sort()
		r.sinceCkpt = append(r.sinceCkpt, bufferedEpoch{b.Epoch.Curr, r.epochToA})
		r.epochToA = &storage.Writes{}
	}
	if e.finished {
		return nil
	}
	if err := e.emitSnapshotChunk(); err != nil {
		return err
	}
	for _, c := range e.buffer {
		r.filter(c)
		if err := e.materialize(c); err != nil {
			return err
		}
	}
	e.buffer = e.buffer[:0]
	return nil
}

// next reopens the scan on the epoch barrier b ends, without waiting for its commit.
func (r *reopened) next(b *stream.Barrier) error {
	e := r.e
	if e.finished {
		r.sinceCkpt, r.epochToA = nil, nil // nothing reads A any more
		return nil
	}
	opened := time.Now()
	if err := r.openScan(b.Epoch.Curr); err != nil {
		return err
	}
	e.scanFrom = time.Now()
	e.part.Phases.Open = e.scanFrom.Sub(opened)
	return nil
}
