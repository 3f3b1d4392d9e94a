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
// primary-key order by a binary heap on the key bytes after the table|vnode prefix.
type MergeIter struct {
	iters   []*pebble.Iterator
	heap    []heapEntry
	advance bool // heap[0] was returned last; it moves on the next call
	err     error
}

// heapEntry caches an iterator's pk (its key after the prefix), which the heap
// compares about 2·log2(vnodes) times per row.
type heapEntry struct {
	pk []byte
	it *pebble.Iterator
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
		if it.First() {
			m.heap = append(m.heap, heapEntry{it.Key()[storage.PrefixLen:], it})
		} else if err := it.Error(); err != nil {
			m.Close()
			return nil, err
		}
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m, nil
}

func (m *MergeIter) down(i int) {
	h := m.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && bytes.Compare(h[r].pk, h[l].pk) < 0 {
			c = r
		}
		if bytes.Compare(h[c].pk, h[i].pk) >= 0 {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// Next returns the next row's key and value in pk order; they stay valid until the
// following call. ok is false at the end or on error (see Err).
func (m *MergeIter) Next() (key, value []byte, ok bool) {
	if m.advance {
		m.advance = false
		it := m.heap[0].it
		if it.Next() {
			m.heap[0].pk = it.Key()[storage.PrefixLen:]
			m.down(0)
		} else {
			if err := it.Error(); err != nil {
				m.err = err
				return nil, nil, false
			}
			last := len(m.heap) - 1
			m.heap[0] = m.heap[last]
			m.heap = m.heap[:last]
			m.down(0)
		}
	}
	if len(m.heap) == 0 {
		return nil, nil, false
	}
	it := m.heap[0].it
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
	m.iters, m.heap, m.advance = nil, nil, false
	return errors.Join(errs...)
}
