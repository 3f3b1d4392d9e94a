package backfill

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/backfill-bench/backfill-bench/bench/storage"
)

// epochWrites holds one actor's MV writes of an epoch and hands them over in key
// order, with one write per key (storage.Writes says why).
//
// Snapshot rows need no sort: keys are table|vnode|pk and the scan emits each vnode's
// rows in pk order, once per epoch, so one batch per vnode, in vnode order, is sorted.
// Upstream writes come in any order; they are sorted and merged in. Within an epoch
// every snapshot row precedes every upstream write (upstream is buffered until the
// barrier or the scan's end), so where both touch a key the upstream write is the
// later one and the only one kept.
type epochWrites struct {
	db            *pebble.DB
	firstVnode    uint16
	snapshot      []*pebble.Batch // per owned vnode, created on first use
	snapshotBytes int64           // logical bytes of the snapshot rows
	upstream      storage.Writes
}

func newEpochWrites(db *pebble.DB, vnodes []uint16) *epochWrites {
	return &epochWrites{db: db, firstVnode: vnodes[0], snapshot: make([]*pebble.Batch, len(vnodes))}
}

// snapshotSet writes a snapshot row of owned vnode index vi.
func (w *epochWrites) snapshotSet(vi int, key, value []byte) error {
	b := w.snapshot[vi]
	if b == nil {
		b = w.db.NewBatch()
		w.snapshot[vi] = b
	}
	w.snapshotBytes += int64(len(key) + len(value))
	return b.Set(key, value, nil)
}

// runs hands over the epoch's writes as batches in key order, each in key order, with
// their logical bytes, and empties w. A vnode without upstream writes hands over its
// snapshot batch as it is, uncopied; the others are merged into new batches.
func (w *epochWrites) runs() ([]*pebble.Batch, int64, error) {
	ups := &w.upstream
	ups.Sort()
	var runs []*pebble.Batch
	m := merger{ups: ups, bytes: w.snapshotBytes}
	for vi, snap := range w.snapshot {
		vnode := w.firstVnode + uint16(vi)
		end := m.next
		for end < ups.Len() && storage.KeyVnode(ups.Key(end)) == vnode {
			end++
		}
		if snap != nil && snap.Empty() {
			snap = nil // kept from an earlier epoch, unused in this one
		}
		if m.next == end {
			if snap != nil {
				runs = append(runs, snap)
				w.snapshot[vi] = nil
			}
			continue
		}
		size := 0
		if snap != nil {
			size = len(snap.Repr())
		}
		m.dst = w.db.NewBatchWithSize(size + ups.BatchSize()*(end-m.next)/ups.Len())
		runs = append(runs, m.dst)
		if err := m.merge(snap, end); err != nil {
			closeAll(runs)
			return nil, 0, fmt.Errorf("vnode %d: %w", vnode, err)
		}
		if snap != nil {
			snap.Reset()
		}
	}
	// Upstream rows route to their vnode's actor, so none is left; if one were, it
	// still belongs in the epoch, out of order.
	if m.next < ups.Len() {
		m.dst = w.db.NewBatch()
		runs = append(runs, m.dst)
		if err := m.putUpstream(ups.Len()); err != nil {
			closeAll(runs)
			return nil, 0, err
		}
	}
	ups.Reset()
	w.snapshotBytes = 0
	return runs, m.bytes, nil
}

func closeAll(bs []*pebble.Batch) {
	for _, b := range bs {
		b.Close()
	}
}

// merger appends sorted upstream writes, from next on, and snapshot rows to dst.
type merger struct {
	dst   *pebble.Batch
	ups   *storage.Writes
	next  int
	bytes int64
}

func (m *merger) putUpstream(end int) error {
	for ; m.next < end; m.next++ {
		n, err := m.ups.Put(m.dst, m.next)
		if err != nil {
			return err
		}
		m.bytes += n
	}
	return nil
}

// merge appends the rows of snap (nil: none) and the upstream writes before end in
// key order, dropping the snapshot rows an upstream write replaces.
func (m *merger) merge(snap *pebble.Batch, end int) error {
	if snap == nil {
		return m.putUpstream(end)
	}
	for r := snap.Reader(); ; {
		kind, key, value, ok, err := r.Next()
		if err != nil {
			return fmt.Errorf("read back the snapshot rows: %w", err)
		}
		if !ok {
			break
		}
		if kind != pebble.InternalKeyKindSet {
			return fmt.Errorf("a snapshot row is a %v", kind)
		}
		for m.next < end && bytes.Compare(m.ups.Key(m.next), key) < 0 {
			if err := m.putUpstream(m.next + 1); err != nil {
				return err
			}
		}
		if m.next < end && bytes.Equal(m.ups.Key(m.next), key) {
			m.bytes -= int64(len(key) + len(value))
			continue
		}
		if err := m.dst.Set(key, value, nil); err != nil {
			return err
		}
	}
	return m.putUpstream(end)
}

// close releases the per-vnode batches.
func (w *epochWrites) close() {
	for i, b := range w.snapshot {
		if b != nil {
			b.Close()
			w.snapshot[i] = nil
		}
	}
}
