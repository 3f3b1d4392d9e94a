// Package verify checks a backfill's result: the MV equals the upstream table, the
// state table is complete, and B holds what the persisted progress says.
package verify

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/backfill-bench/backfill-bench/bench/backfill"
	"github.com/backfill-bench/backfill-bench/bench/memcmp"
	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/internal/extrawork"
)

// Reader is what MV reads: a snapshot, the DB, or an indexed batch.
type Reader interface {
	NewIter(*pebble.IterOptions) (*pebble.Iterator, error)
}

// MV checks that table B equals table A in snap, row for row: the same
// vnode|pk keys with the same values, and returns the row count. The error names the
// first differing key.
func MV(snap Reader, s *row.Schema) (int64, error) {
	extrawork.Verify()
	return Tables(snap, s, storage.TableUpstream, Span{}, storage.TableMV, Span{}, "MV verification", "A", "B")
}

// State checks the state table of a persist=on job that has finished: one
// row per vnode, each finished, their row counts summing to rows (the snapshot rows
// read, over every run of the job). A job reports nothing unless its state is right,
// as it reports nothing unless B equals A.
func State(snap *storage.Snapshot, s *row.Schema, vnodes int, rows int64) error {
	states, err := backfill.ReadStates(snap, len(s.PK))
	if err != nil {
		return fmt.Errorf("state verification: %w", err)
	}
	if len(states) != vnodes {
		return fmt.Errorf("state verification: %d state rows, want one per vnode (%d)", len(states), vnodes)
	}
	var sum int64
	for i, st := range states {
		switch {
		case int(st.Vnode) != i:
			return fmt.Errorf("state verification: state row %d is for vnode %d", i, st.Vnode)
		case !st.Finished:
			return fmt.Errorf("state verification: vnode %d is not finished at the end of the job", st.Vnode)
		}
		sum += st.RowCount
	}
	if sum != rows {
		return fmt.Errorf("state verification: the state rows count %d snapshot rows, but %d were read", sum, rows)
	}
	return nil
}

// Progress checks, at snap (a job's committed epoch), that B holds exactly
// the rows of A that the persisted backfill state says were emitted: in each vnode
// those with pk ≤ its position, all of them once it is finished, none before it has
// a position. It is what a recovery relies on, so it is checked after every crash.
func Progress(snap *storage.EpochSnapshot, s *row.Schema, vnodes int) error {
	states, err := backfill.ReadStates(snap.Snap, len(s.PK))
	if err != nil {
		return fmt.Errorf("epoch %d: read the backfill state: %w", snap.Epoch, err)
	}
	byVnode := make([]*backfill.VnodeState, vnodes)
	for i := range states {
		if v := int(states[i].Vnode); v < len(byVnode) {
			byVnode[v] = &states[i]
		}
	}
	check := fmt.Sprintf("progress check at epoch %d", snap.Epoch)
	for v := range byVnode {
		vnode := Span{Lo: binary.BigEndian.AppendUint16(nil, uint16(v))} // all its rows
		if v+1 < 1<<16 {
			vnode.Hi = binary.BigEndian.AppendUint16(nil, uint16(v+1))
		}
		emitted := Span{Lo: vnode.Lo, Hi: vnode.Lo} // none
		switch st := byVnode[v]; {
		case st != nil && st.Finished:
			emitted = vnode
		case st != nil && st.Pos != nil:
			emitted.Hi = append(memcmp.AppendKey(bytes.Clone(vnode.Lo), st.Pos, s.PKDesc), 0) // just above pos
		}
		if _, err := Tables(snap.Snap, s, storage.TableUpstream, emitted, storage.TableMV, vnode, check, "A up to the persisted position", "B"); err != nil {
			return err
		}
	}
	if vnodes < 1<<16 { // and nothing in vnodes the job does not have
		beyond := Span{Lo: binary.BigEndian.AppendUint16(nil, uint16(vnodes))}
		if _, err := Tables(snap.Snap, s, storage.TableUpstream, beyond, storage.TableMV, beyond, check, "A", "B"); err != nil {
			return err
		}
	}
	return nil
}

// Span is a range of keys after the table id, [lo, hi); hi nil: to the table's end.
type Span struct{ Lo, Hi []byte }

func (sp Span) iterOptions(t storage.TableID) *pebble.IterOptions {
	tlo, thi := storage.TableBounds(t)
	o := &pebble.IterOptions{LowerBound: append(tlo[:4:4], sp.Lo...), UpperBound: thi}
	if sp.Hi != nil {
		o.UpperBound = append(tlo[:4:4], sp.Hi...)
	}
	return o
}

// Tables checks that table ta within Span sa and table tb within sb (named na
// and nb in errors) hold the same vnode|pk keys with the same values, and returns the
// row count.
func Tables(snap Reader, s *row.Schema, ta storage.TableID, sa Span, tb storage.TableID, sb Span, check, na, nb string) (int64, error) {
	a, err := snap.NewIter(sa.iterOptions(ta))
	if err != nil {
		return 0, err
	}
	defer a.Close()
	b, err := snap.NewIter(sb.iterOptions(tb))
	if err != nil {
		return 0, err
	}
	defer b.Close()
	okA, okB := a.First(), b.First()
	var n int64
	for ; okA || okB; n++ {
		var ka, kb []byte
		if okA {
			ka = a.Key()[4:]
		}
		if okB {
			kb = b.Key()[4:]
		}
		switch c := bytes.Compare(ka, kb); {
		case !okB || okA && c < 0:
			return 0, fmt.Errorf("%s: row %s is in %s but missing from %s", check, DescribeKey(ka, s), na, nb)
		case !okA || c > 0:
			return 0, fmt.Errorf("%s: row %s is in %s but not in %s", check, DescribeKey(kb, s), nb, na)
		}
		if !bytes.Equal(a.Value(), b.Value()) {
			ra, _ := row.DecodeValue(nil, a.Value())
			rb, _ := row.DecodeValue(nil, b.Value())
			return 0, fmt.Errorf("%s: row %s differs: %s has %v, %s has %v", check, DescribeKey(ka, s), na, ra, nb, rb)
		}
		okA, okB = a.Next(), b.Next()
	}
	if err := a.Error(); err != nil {
		return 0, err
	}
	return n, b.Error()
}

// DescribeKey renders a vnode|pk key suffix as "vnode 7 pk (42)".
func DescribeKey(k []byte, s *row.Schema) string {
	if len(k) < 2 {
		return fmt.Sprintf("%x", k)
	}
	vnode := uint16(k[0])<<8 | uint16(k[1])
	pk, _, err := memcmp.DecodeKey(nil, k[2:], len(s.PK), s.PKDesc)
	if err != nil {
		return fmt.Sprintf("vnode %d key %x", vnode, k[2:])
	}
	return fmt.Sprintf("vnode %d pk %v", vnode, row.Row(pk))
}

// Count counts the rows of table t in r.
func Count(r Reader, t storage.TableID) (int64, error) {
	lo, hi := storage.TableBounds(t)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return 0, err
	}
	defer it.Close()
	var n int64
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	return n, it.Error()
}
