package backfill

import (
	"bytes"
	"fmt"

	"github.com/backfill-bench/backfill-bench/bench/memcmp"
	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/scaniter"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/stream"
)

// mergedScan is the merged scan (RisingWave's no-shuffle backfill): the actor's
// vnodes merged in pk order, reopened at every barrier, with one position for the
// actor, which every vnode's state row holds; upstream rows are kept up to it.
type mergedScan struct {
	reopened
	pos    []row.Datum // last emitted pk; nil before the first row
	posKey []byte      // memcomparable encoding of pos

	persistedKey      []byte
	persistedFinished bool
	persistedAny      bool
}

func newMergedScan(e *Executor) strategy {
	m := &mergedScan{}
	m.reopened = reopened{e: e, open: m.open, filter: m.filter}
	return m
}

func (m *mergedScan) open(snap *storage.Snapshot, ov *storage.Writes) (scaniter.Scan, error) {
	return scaniter.NewMergeIter(snap, ov, storage.TableUpstream, m.e.cfg.Vnodes, m.posKey)
}

func (m *mergedScan) filter(c *stream.Chunk) { FilterUpTo(c, m.e.cfg.Schema, m.pos) }

// resume takes up the one position the actor's vnodes persisted.
func (m *mergedScan) resume(rs []VnodeState, keys [][]byte) error {
	e := m.e
	// One position describes a merged-scan actor, so its vnodes must agree: they do
	// when the job resumes with the par it ran with, or with a par that splits each
	// old actor's vnodes further, or when all are finished (positions no longer
	// matter).
	for i, st := range rs[1:] {
		if st.Finished != rs[0].Finished || !st.Finished && !bytes.Equal(keys[i+1], keys[0]) {
			return fmt.Errorf("backfill: actor %d: vnode %d (pos %v, finished %v) and vnode %d (pos %v, finished %v) were persisted with different progress, and the merged scan keeps one position per actor: resume with the par the job ran with (or one that splits its actors), or use scan=per-vnode",
				e.cfg.Actor, rs[0].Vnode, row.Row(rs[0].Pos), rs[0].Finished, st.Vnode, row.Row(st.Pos), st.Finished)
		}
	}
	m.pos, m.posKey, e.finished = rs[0].Pos, keys[0], rs[0].Finished
	if m.pos != nil || e.finished {
		// A copy: posKey's array is reused as the scan advances.
		m.persistedKey, m.persistedFinished, m.persistedAny = bytes.Clone(keys[0]), e.finished, true
	}
	return nil
}

func (m *mergedScan) read([]byte, bool) {}

// emitted moves the position to the chunk's last row.
func (m *mergedScan) emitted(c *stream.Chunk) {
	s := m.e.cfg.Schema
	m.pos = s.PKOf(m.pos[:0], c.Rows[c.Len()-1])
	m.posKey = memcmp.AppendKey(m.posKey[:0], m.pos, s.PKDesc)
}

// persist writes the actor's position to every vnode's state row, when it moved.
func (m *mergedScan) persist(*stream.Barrier) error {
	e := m.e
	if m.pos == nil && !e.finished {
		return nil
	}
	if m.persistedAny && m.persistedFinished == e.finished && bytes.Equal(m.persistedKey, m.posKey) {
		return nil
	}
	for i, v := range e.cfg.Vnodes {
		if err := e.putState(VnodeState{Vnode: v, Pos: m.pos, Finished: e.finished, RowCount: e.rows[i]}); err != nil {
			return err
		}
	}
	m.persistedKey = append(m.persistedKey[:0], m.posKey...)
	m.persistedFinished, m.persistedAny = e.finished, true
	return nil
}
