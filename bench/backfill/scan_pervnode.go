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

// perVnodeScan is the per-vnode scan (RisingWave's arrangement backfill): each
// vnode scanned on its own, interleaved, reopened at every barrier, with a
// position per vnode; upstream rows are kept by their vnode's progress.
type perVnodeScan struct {
	reopened
	vnodeProgress
}

func newPerVnodeScan(e *Executor) strategy {
	p := &perVnodeScan{vnodeProgress: newVnodeProgress(e)}
	p.reopened = reopened{e: e, open: p.openIter, filter: p.vnodeProgress.filter}
	return p
}

// vnodeProgress is a position per owned vnode, and the iterator that moves them:
// the progress of the per-vnode and snapshot scans.
type vnodeProgress struct {
	e     *Executor
	vscan *scaniter.VnodeIter
	// Each owned vnode's last emitted pk (nil: not started), whether it is
	// completed, and whether either changed since it was last persisted.
	vposKey [][]byte
	vdone   []bool
	vdirty  []bool
}

func newVnodeProgress(e *Executor) vnodeProgress {
	n := len(e.cfg.Vnodes)
	return vnodeProgress{e: e, vposKey: make([][]byte, n), vdone: make([]bool, n), vdirty: make([]bool, n)}
}

// openIter opens one iterator per unfinished vnode after its position, on snap
// overlaid with ov.
func (p *vnodeProgress) openIter(snap *storage.Snapshot, ov *storage.Writes) (scaniter.Scan, error) {
	vscan, err := scaniter.NewVnodeIter(snap, ov, storage.TableUpstream, p.e.cfg.Vnodes, p.vposKey, p.vdone)
	if err != nil {
		p.vscan = nil
		return nil, err
	}
	p.vscan = vscan
	p.markCompleted()
	return vscan, nil
}

// markCompleted records the vnodes whose scan has ended.
func (p *vnodeProgress) markCompleted() {
	for _, i := range p.vscan.Exhausted() {
		p.vdone[i], p.vdirty[i] = true, true
	}
}

// resume takes up each vnode's persisted position; the actor is finished when all are.
func (p *vnodeProgress) resume(rs []VnodeState, keys [][]byte) error {
	p.e.finished = true
	for i, st := range rs {
		p.vposKey[i], p.vdone[i] = keys[i], st.Finished
		p.e.finished = p.e.finished && st.Finished
	}
	return nil
}

// read moves the position of the row's vnode to it: the chunk is emitted before
// anything reads a position, so the position can move with the row.
func (p *vnodeProgress) read(key []byte, ok bool) {
	p.markCompleted()
	if ok {
		vi := p.e.vnodeIndex(key)
		p.vposKey[vi] = append(p.vposKey[vi][:0], key[storage.PrefixLen:]...)
		p.vdirty[vi] = true
	}
}

func (p *vnodeProgress) emitted(*stream.Chunk) {}

// filter keeps visible the rows of c that the scan has passed, by the state of
// each row's vnode: all of a completed vnode, none of a vnode not started, pk ≤
// position otherwise.
func (p *vnodeProgress) filter(c *stream.Chunk) {
	e := p.e
	if c.Vis == nil {
		c.Vis = stream.NewBitmap(c.Len(), true)
	}
	for i, r := range c.Rows {
		if !c.Vis.Get(i) {
			continue
		}
		v := e.vnoder.Of(r)
		vi := int(v - e.cfg.Vnodes[0])
		if p.vdone[vi] {
			continue
		}
		pos := p.vposKey[vi]
		e.keyBuf = storage.AppendRowKey(e.keyBuf[:0], storage.TableUpstream, v, e.cfg.Schema, r)
		if pos == nil || bytes.Compare(e.keyBuf[storage.PrefixLen:], pos) > 0 {
			c.Vis.Set(i, false)
		}
	}
	fixSplitUpdates(c)
}

// persist writes a state row for each vnode whose progress changed.
func (p *vnodeProgress) persist(*stream.Barrier) error {
	e := p.e
	s := e.cfg.Schema
	var pos []row.Datum
	for i, v := range e.cfg.Vnodes {
		if !p.vdirty[i] {
			continue
		}
		p.vdirty[i] = false
		pos = pos[:0]
		if k := p.vposKey[i]; k != nil {
			var err error
			if pos, _, err = memcmp.DecodeKey(pos, k, len(s.PK), s.PKDesc); err != nil {
				return fmt.Errorf("backfill: actor %d: vnode %d position %x: %w", e.cfg.Actor, v, k, err)
			}
		} else {
			pos = nil
		}
		if err := e.putState(VnodeState{Vnode: v, Pos: pos, Finished: p.vdone[i], RowCount: e.rows[i]}); err != nil {
			return err
		}
	}
	return nil
}
