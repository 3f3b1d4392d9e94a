package backfill

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/backfill-bench/backfill-bench/bench/memcmp"
	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/storage"
)

// VnodeState is one row of the backfill state table: vnode | pos (the upstream pk
// columns, NULL before any row) | backfill_finished | row_count.
type VnodeState struct {
	Vnode    uint16
	Pos      []row.Datum // nil: nothing scanned yet
	Finished bool
	RowCount int64 // snapshot rows read from this vnode
}

// AppendStateKey appends the state table key of vnode: its pk is the vnode itself.
func AppendStateKey(dst []byte, vnode uint16) []byte {
	return memcmp.AppendKey(storage.AppendPrefix(dst, storage.TableState, vnode), []row.Datum{row.I64(int64(vnode))}, nil)
}

// AppendStateValue appends the value of st for a table with pkLen pk columns.
func AppendStateValue(dst []byte, st VnodeState, pkLen int) []byte {
	var buf [8]row.Datum // on the stack for keys of up to 4 columns: no allocation per state row
	scratch := buf[:0]
	scratch = append(scratch, row.I64(int64(st.Vnode)))
	if st.Pos == nil {
		for i := 0; i < pkLen; i++ {
			scratch = append(scratch, row.NullDatum)
		}
	} else {
		scratch = append(scratch, st.Pos...)
	}
	scratch = append(scratch, row.B(st.Finished), row.I64(st.RowCount))
	if statePadding != "" {
		scratch = append(scratch, row.Str(statePadding))
	}
	return row.AppendValue(dst, scratch)
}

// DecodeState decodes a state value written by AppendStateValue.
func DecodeState(v []byte, pkLen int) (VnodeState, error) {
	st, _, err := DecodeStateInto(nil, v, pkLen)
	return st, err
}

// DecodeStateInto is DecodeState decoding into dst's space, returned for reuse:
// the state's Pos is then dst's, valid until dst is decoded into again.
func DecodeStateInto(dst []row.Datum, v []byte, pkLen int) (VnodeState, []row.Datum, error) {
	r, err := row.DecodeValue(dst[:0], v)
	if err != nil {
		return VnodeState{}, r, fmt.Errorf("backfill state: %w", err)
	}
	cols := pkLen + 3
	if statePadding != "" {
		cols++
	}
	if len(r) != cols || r[0].Kind != row.Int64 || r[pkLen+1].Kind != row.Bool || r[pkLen+2].Kind != row.Int64 {
		return VnodeState{}, r, fmt.Errorf("backfill state: row %v does not match %d pk columns", r, pkLen)
	}
	st := VnodeState{Vnode: uint16(r[0].I), Finished: r[pkLen+1].I != 0, RowCount: r[pkLen+2].I}
	pos := r[1 : 1+pkLen]
	for _, d := range pos {
		if d.Kind != row.Null {
			st.Pos = pos
			break
		}
	}
	return st, r, nil
}

// ReadStates returns every state row at snap, in vnode order.
func ReadStates(snap *storage.Snapshot, pkLen int) ([]VnodeState, error) {
	lo, hi := storage.TableBounds(storage.TableState)
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []VnodeState
	for ok := it.First(); ok; ok = it.Next() {
		st, err := DecodeState(it.Value(), pkLen)
		if err != nil {
			return nil, fmt.Errorf("key %x: %w", it.Key(), err)
		}
		if st.Vnode != storage.KeyVnode(it.Key()) {
			return nil, fmt.Errorf("key %x holds the state of vnode %d", it.Key(), st.Vnode)
		}
		out = append(out, st)
	}
	return out, it.Error()
}
