package backfill

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/batchrepr"

	"github.com/backfill-bench/backfill-bench/bench/storage"
)

// epochWrites holds one actor's MV writes of an epoch and hands them over in key
// order, with one write per key (storage.Writes says why), as one batch.
//
// Snapshot rows need no sort: keys are table|vnode|pk and the scan emits each vnode's
// rows in pk order, once per epoch, so each vnode's rows in the order they came, in
// vnode order, are sorted. They go into one arena as they come and into the batch at
// the barrier: writing each straight into a batch of its vnode's, as the scan takes
// the vnodes in turn, touched another batch's cold memory at every row (about 160
// ns a row, BenchmarkExecutorSnapshotScan). Upstream writes come in any order; they
// are sorted and merged in. Within an epoch every snapshot row precedes every
// upstream write (upstream is buffered until the barrier or the scan's end), so where
// both touch a key the upstream write is the later one and the only one kept.
type epochWrites struct {
	db            *pebble.DB
	firstVnode    uint16
	arena         []byte      // the snapshot rows' keys and values
	snapshot      [][]snapRow // per owned vnode, in the order they came
	snapshotBytes int64       // logical bytes of the snapshot rows
	upstream      storage.Writes
}

// snapRow is a snapshot row's key and value in the arena.
type snapRow struct{ off, keyLen, valLen uint32 }

func newEpochWrites(db *pebble.DB, vnodes []uint16) *epochWrites {
	return &epochWrites{db: db, firstVnode: vnodes[0], snapshot: make([][]snapRow, len(vnodes))}
}

// snapshotSet writes a snapshot row of owned vnode index vi.
func (w *epochWrites) snapshotSet(vi int, key, value []byte) {
	w.snapshot[vi] = append(w.snapshot[vi], snapRow{off: uint32(len(w.arena)), keyLen: uint32(len(key)), valLen: uint32(len(value))})
	w.arena = append(append(w.arena, key...), value...)
	w.snapshotBytes += int64(len(key) + len(value))
}

// row returns snapshot row r's key and value.
func (w *epochWrites) row(r snapRow) (key, value []byte) {
	end := r.off + r.keyLen
	return w.arena[r.off:end], w.arena[end : end+r.valLen]
}

// runs hands over the epoch's writes in key order, as one batch (none when there
// are none), with their logical bytes, and empties w.
func (w *epochWrites) runs() ([]*pebble.Batch, int64, error) {
	ups := &w.upstream
	ups.Sort()
	rows := 0
	for _, vr := range w.snapshot {
		rows += len(vr)
	}
	if rows == 0 && ups.Len() == 0 {
		return nil, 0, nil
	}
	// Each write is a kind byte, two length varints, the key and the value.
	m := merger{w: w, ups: ups, bytes: w.snapshotBytes,
		dst: w.db.NewBatchWithSize(batchrepr.HeaderLen + len(w.arena) + 11*rows + ups.BatchSize())}
	for vi, vr := range w.snapshot {
		vnode := w.firstVnode + uint16(vi)
		end := m.next
		for end < ups.Len() && storage.KeyVnode(ups.Key(end)) == vnode {
			end++
		}
		if err := m.merge(vr, end); err != nil {
			m.dst.Close()
			return nil, 0, fmt.Errorf("vnode %d: %w", vnode, err)
		}
		w.snapshot[vi] = vr[:0]
	}
	// Upstream rows route to their vnode's actor, so none is left; if one were, it
	// still belongs in the epoch, out of order.
	if err := m.putUpstream(ups.Len()); err != nil {
		m.dst.Close()
		return nil, 0, err
	}
	ups.Reset()
	w.arena, w.snapshotBytes = w.arena[:0], 0
	return []*pebble.Batch{m.dst}, m.bytes, nil
}

func closeAll(bs []*pebble.Batch) {
	for _, b := range bs {
		b.Close()
	}
}

// merger appends sorted upstream writes, from next on, and snapshot rows to dst.
type merger struct {
	w     *epochWrites
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

// merge appends a vnode's snapshot rows and the upstream writes before end in key
// order, dropping the snapshot rows an upstream write replaces.
func (m *merger) merge(snap []snapRow, end int) error {
	for _, r := range snap {
		key, value := m.w.row(r)
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

// close releases w's memory.
func (w *epochWrites) close() {
	w.arena, w.snapshot = nil, nil
	w.upstream.Reset()
}
