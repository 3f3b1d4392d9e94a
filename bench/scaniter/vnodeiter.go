package scaniter

import (
	"errors"

	"github.com/backfill-bench/backfill-bench/bench/storage"
)

// VnodeIter is the per-vnode scan: one Pebble iterator per unfinished vnode, each
// from its own position, read ahead like MergeIter's and returned in turn one row at
// a time (interleaved, not merged), so no vnode waits for another and none needs a
// common order.
type VnodeIter struct {
	cursors   []cursor
	index     []int // index in the vnodes passed to NewVnodeIter of each cursor
	live      []int // iterators with rows left, in turn order
	turn      int   // position in live of the iterator read next
	advance   bool  // the iterator at live[turn] returned the last row; move it on
	exhausted []int // vnode indexes whose iterator ended since the last Exhausted
	err       error
}

// NewVnodeIter opens a scan of table t at snap overlaid with ov (as NewMergeIter's)
// over vnodes[i] for every i not done, each starting strictly after the encoded
// primary key after[i] (nil: from the start).
func NewVnodeIter(snap *storage.Snapshot, ov *storage.Writes, t storage.TableID, vnodes []uint16, after [][]byte, done []bool) (*VnodeIter, error) {
	m := &VnodeIter{}
	for i, v := range vnodes {
		if done[i] {
			continue
		}
		lo, hi := scanBounds(t, v, after[i])
		c, err := newCursor(snap, ov, lo, hi)
		if err != nil {
			m.Close()
			return nil, err
		}
		m.cursors = append(m.cursors, c)
		m.index = append(m.index, i)
		if c.pk != nil {
			m.live = append(m.live, len(m.cursors)-1)
		} else {
			m.exhausted = append(m.exhausted, i)
		}
	}
	return m, nil
}

// Next returns the next row's key and value, taking vnodes in turn; they stay valid
// until the following call. ok is false at the end or on error (see Err).
func (m *VnodeIter) Next() (key, value []byte, ok bool) {
	if m.advance {
		m.advance = false
		j := m.live[m.turn]
		if err := m.cursors[j].step(); err != nil {
			m.err = err
			return nil, nil, false
		}
		if m.cursors[j].pk != nil {
			m.turn++
		} else {
			m.exhausted = append(m.exhausted, m.index[j])
			m.live = append(m.live[:m.turn], m.live[m.turn+1:]...)
		}
		if m.turn >= len(m.live) {
			m.turn = 0
		}
	}
	if len(m.live) == 0 {
		return nil, nil, false
	}
	m.advance = true
	key, value = m.cursors[m.live[m.turn]].row()
	return key, value, true
}

// Exhausted returns the indexes of the vnodes whose rows have all been returned since
// the last call (including empty ones found at open), and forgets them.
func (m *VnodeIter) Exhausted() []int {
	out := m.exhausted
	m.exhausted = m.exhausted[len(m.exhausted):]
	return out
}

// Err returns the first error met.
func (m *VnodeIter) Err() error { return m.err }

// Close closes every iterator.
func (m *VnodeIter) Close() error {
	var errs []error
	for _, c := range m.cursors {
		errs = append(errs, c.it.Close())
	}
	m.cursors, m.live = nil, nil
	return errors.Join(errs...)
}
