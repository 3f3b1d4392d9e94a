// Package backfill is the backfill executor: it scans table A's snapshot while
// merging A's change stream, and writes the result into the MV table B.
package backfill

import (
	"bytes"
	"errors"

	"github.com/cockroachdb/pebble/v2"

	"github.com/backfill-bench/backfill-bench/bench/storage"
)

// MergeIter is the merged-vnode scan: one Pebble iterator per vnode, merged in
// primary-key order by a tournament (loser) tree on the key bytes after the
// table|vnode prefix: each row replays one leaf-to-root path, log2(vnodes)
// comparisons, about half of what a binary heap's sift-down takes.
type MergeIter struct {
	iters []*pebble.Iterator
	pks   [][]byte // per iterator, its current pk; nil once exhausted
	// tree[0] is the winner (the iterator with the smallest pk); tree[1:] hold the
	// loser of the match at each internal node. Leaf i's parent is (i+len(iters))/2.
	tree    []int
	advance bool // the winner was returned last; it moves on the next call
	err     error
}

// NewMergeIter opens a scan of table t over vnodes at snap, starting strictly after
// the encoded primary key after (nil: from the start).
func NewMergeIter(snap *pebble.Snapshot, t storage.TableID, vnodes []uint16, after []byte) (*MergeIter, error) {
	m := &MergeIter{}
	for _, v := range vnodes {
		lo, hi := storage.VnodeBounds(t, v)
		if after != nil {
			// key(after) + 0x00 is the smallest key above key(after): encodings of full
			// keys are prefix-free.
			lo = append(append(lo, after...), 0)
		}
		it, err := snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
		if err != nil {
			m.Close()
			return nil, err
		}
		m.iters = append(m.iters, it)
		var pk []byte
		if it.First() {
			pk = it.Key()[storage.PrefixLen:]
		} else if err := it.Error(); err != nil {
			m.Close()
			return nil, err
		}
		m.pks = append(m.pks, pk)
	}
	// Build by replaying every leaf into a tree of -1 entries, which win every match
	// until the real leaves have pushed them all out.
	m.tree = make([]int, len(m.iters))
	for i := range m.tree {
		m.tree[i] = -1
	}
	for i := len(m.iters) - 1; i >= 0; i-- {
		m.replay(i)
	}
	return m, nil
}

// beats reports whether leaf a wins over leaf b: -1 beats all, exhausted leaves lose
// to all others.
func (m *MergeIter) beats(a, b int) bool {
	switch {
	case a < 0:
		return true
	case b < 0:
		return false
	case m.pks[a] == nil:
		return false
	case m.pks[b] == nil:
		return true
	}
	return bytes.Compare(m.pks[a], m.pks[b]) < 0
}

// replay plays leaf s from its parent up to the root.
func (m *MergeIter) replay(s int) {
	for t := (s + len(m.tree)) / 2; t > 0; t /= 2 {
		if m.beats(m.tree[t], s) {
			s, m.tree[t] = m.tree[t], s
		}
	}
	m.tree[0] = s
}

// Next returns the next row's key and value in pk order; they stay valid until the
// following call. ok is false at the end or on error (see Err).
func (m *MergeIter) Next() (key, value []byte, ok bool) {
	if len(m.tree) == 0 {
		return nil, nil, false
	}
	w := m.tree[0]
	if m.advance {
		m.advance = false
		it := m.iters[w]
		if it.Next() {
			m.pks[w] = it.Key()[storage.PrefixLen:]
		} else {
			if err := it.Error(); err != nil {
				m.err = err
				return nil, nil, false
			}
			m.pks[w] = nil
		}
		m.replay(w)
		w = m.tree[0]
	}
	if m.pks[w] == nil {
		return nil, nil, false
	}
	it := m.iters[w]
	m.advance = true
	v, err := it.ValueAndErr()
	if err != nil {
		m.err = err
		return nil, nil, false
	}
	return it.Key(), v, true
}

// Err returns the first error met.
func (m *MergeIter) Err() error { return m.err }

// Close closes every iterator.
func (m *MergeIter) Close() error {
	var errs []error
	for _, it := range m.iters {
		errs = append(errs, it.Close())
	}
	m.iters, m.pks, m.tree, m.advance = nil, nil, nil, false
	return errors.Join(errs...)
}
