// Package scaniter holds the backfill's snapshot scans over table A: the merged
// scan (one pk order over an actor's vnodes) and the per-vnode scan.
package scaniter

import (
	"bytes"
	"errors"

	"github.com/cockroachdb/pebble/v2"

	"github.com/backfill-bench/backfill-bench/bench/storage"
)

// prefetchRows is how many rows each vnode's cursor reads ahead at most: moving one
// Pebble iterator several steps in a row keeps its block and state in cache, which
// stepping 128 iterators in turn, one row each, does not (BenchmarkMergeIter). A
// cursor starts at firstPrefetch and doubles at each refill: a scan reopened for a
// small epoch reads a few rows per vnode, not 64 (traces showed reopening the scan
// taking 45 % of a 2 500-row epoch when every cursor read 64 rows ahead at once).
const (
	prefetchRows  = 64
	firstPrefetch = 4
)

// Scan is either scan: its rows in order, key and value valid until the next call,
// then whether an error ended them.
type Scan interface {
	Next() (key, value []byte, ok bool)
	Err() error
	Close() error
}

// MergeIter is the merged-vnode scan: one Pebble iterator per vnode, read ahead a
// few rows at a time, merged in primary-key order by a tournament (loser) tree on the
// key bytes after the table|vnode prefix: each row replays one leaf-to-root path,
// log2(vnodes) comparisons, about half of what a binary heap's sift-down takes.
type MergeIter struct {
	cursors []cursor
	// tree[0] is the winner (the cursor with the smallest pk); tree[1:] hold the
	// loser of the match at each internal node. Leaf i's parent is (i+len(cursors))/2.
	tree    []int
	advance bool // the winner was returned last; it moves on the next call
	err     error
}

// cursor is one vnode's iterator, overlaid with the writes to its range that the
// snapshot does not hold, and the rows read ahead from both.
type cursor struct {
	it    *pebble.Iterator
	ov    *storage.Writes // sorted, one per key; nil: none
	ovAt  int             // the next overlay write is ov's ovAt-th, while ovAt < ovEnd
	ovEnd int
	buf   []byte  // keys and values of the rows read ahead
	ends  []int32 // per row read ahead, where its key ends and its value ends in buf
	next  int     // the current row is ends[2*next], ends[2*next+1]
	pk    []byte  // the current row's pk (key after the prefix); nil once exhausted
	want  int     // rows the next fill reads ahead
}

// newCursor opens a cursor over [lo, hi) of snap overlaid with ov (nil: none) and
// reads its first rows.
func newCursor(snap *storage.Snapshot, ov *storage.Writes, lo, hi []byte) (cursor, error) {
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return cursor{}, err
	}
	c := cursor{it: it}
	if ov != nil {
		c.ov, c.ovAt, c.ovEnd = ov, ov.Search(lo), ov.Search(hi)
	}
	c.it.First()
	if err := c.fill(); err != nil {
		c.it.Close()
		return cursor{}, err
	}
	return c, nil
}

// fill reads up to want rows ahead, then doubles want up to prefetchRows; pk is nil
// if there are none. An overlay write replaces the snapshot's row of its key, and an
// overlay delete hides it.
func (c *cursor) fill() error {
	c.buf, c.ends, c.next, c.pk = c.buf[:0], c.ends[:0], 0, nil
	want := max(c.want, firstPrefetch)
	c.want = min(2*want, prefetchRows)
	for len(c.ends) < 2*want {
		valid := c.it.Valid()
		if c.ovAt < c.ovEnd {
			key, value, del := c.ov.Write(c.ovAt)
			order := -1 // the overlay's key comes first
			if valid {
				order = bytes.Compare(key, c.it.Key())
			}
			if order <= 0 {
				c.ovAt++
				if order == 0 {
					c.it.Next()
				}
				if !del {
					c.appendRow(key, value)
				}
				continue
			}
		}
		if !valid {
			break
		}
		v, err := c.it.ValueAndErr()
		if err != nil {
			return err
		}
		c.appendRow(c.it.Key(), v)
		c.it.Next()
	}
	if err := c.it.Error(); err != nil {
		return err
	}
	c.setPK()
	return nil
}

func (c *cursor) appendRow(key, value []byte) {
	c.buf = append(c.buf, key...)
	c.ends = append(c.ends, int32(len(c.buf)))
	c.buf = append(c.buf, value...)
	c.ends = append(c.ends, int32(len(c.buf)))
}

// setPK points pk at the current row's pk, or nil when the rows read are used up.
func (c *cursor) setPK() {
	c.pk = nil
	if 2*c.next < len(c.ends) {
		key, _ := c.row()
		c.pk = key[storage.PrefixLen:]
	}
}

// row returns the current row's key and value.
func (c *cursor) row() (key, value []byte) {
	start := 0
	if c.next > 0 {
		start = int(c.ends[2*c.next-1])
	}
	return c.buf[start:c.ends[2*c.next]], c.buf[c.ends[2*c.next]:c.ends[2*c.next+1]]
}

// step moves to the next row, reading ahead again when the rows read are used up.
func (c *cursor) step() error {
	c.next++
	if 2*c.next < len(c.ends) {
		c.setPK()
		return nil
	}
	return c.fill()
}

// NewMergeIter opens a scan of table t over vnodes at snap overlaid with ov (writes
// to t the snapshot does not hold, sorted, one per key; nil: none), starting strictly
// after the encoded primary key after (nil: from the start).
func NewMergeIter(snap *storage.Snapshot, ov *storage.Writes, t storage.TableID, vnodes []uint16, after []byte) (*MergeIter, error) {
	m := &MergeIter{cursors: make([]cursor, 0, len(vnodes))}
	for _, v := range vnodes {
		lo, hi := scanBounds(t, v, after)
		c, err := newCursor(snap, ov, lo, hi)
		if err != nil {
			m.Close()
			return nil, err
		}
		m.cursors = append(m.cursors, c)
	}
	// Build by replaying every leaf into a tree of -1 entries, which win every match
	// until the real leaves have pushed them all out.
	m.tree = make([]int, len(m.cursors))
	for i := range m.tree {
		m.tree[i] = -1
	}
	for i := len(m.cursors) - 1; i >= 0; i-- {
		m.replay(i)
	}
	return m, nil
}

// scanBounds are the keys of vnode v of table t after the encoded primary key after
// (nil: all of them).
func scanBounds(t storage.TableID, v uint16, after []byte) (lo, hi []byte) {
	lo, hi = storage.VnodeBounds(t, v)
	if after != nil {
		// key(after) + 0x00 is the smallest key above key(after): encodings of full
		// keys are prefix-free.
		lo = append(append(lo, after...), 0)
	}
	return lo, hi
}

// beats reports whether leaf a wins over leaf b: -1 beats all, exhausted leaves lose
// to all others.
func (m *MergeIter) beats(a, b int) bool {
	switch {
	case a < 0:
		return true
	case b < 0:
		return false
	case m.cursors[a].pk == nil:
		return false
	case m.cursors[b].pk == nil:
		return true
	}
	return bytes.Compare(m.cursors[a].pk, m.cursors[b].pk) < 0
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
	if len(m.tree) == 0 || m.err != nil {
		return nil, nil, false
	}
	w := m.tree[0]
	if m.advance {
		m.advance = false
		if err := m.cursors[w].step(); err != nil {
			m.err = err
			return nil, nil, false
		}
		m.replay(w)
		w = m.tree[0]
	}
	c := &m.cursors[w]
	if c.pk == nil {
		return nil, nil, false
	}
	m.advance = true
	key, value = c.row()
	return key, value, true
}

// Err returns the first error met.
func (m *MergeIter) Err() error { return m.err }

// Close closes every iterator.
func (m *MergeIter) Close() error {
	var errs []error
	for _, c := range m.cursors {
		errs = append(errs, c.it.Close())
	}
	m.cursors, m.tree, m.advance = nil, nil, false
	return errors.Join(errs...)
}
