package pipeline

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/backfill-bench/backfill-bench/bench/memcmp"
	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/storage"
)

// Reader is what VerifyMV reads: a snapshot, the DB, or an indexed batch.
type Reader interface {
	NewIter(*pebble.IterOptions) (*pebble.Iterator, error)
}

// VerifyMV checks that table B equals table A in snap, row for row: the same
// vnode|pk keys with the same values, and returns the row count. The error names the
// first differing key.
func VerifyMV(snap Reader, s *row.Schema) (int64, error) {
	return compareTables(snap, s, storage.TableUpstream, storage.TableMV, "MV verification", "A", "B")
}

// compareTables checks that tables ta and tb (named na and nb in errors) hold the same
// vnode|pk keys with the same values, and returns the row count.
func compareTables(snap Reader, s *row.Schema, ta, tb storage.TableID, check, na, nb string) (int64, error) {
	open := func(t storage.TableID) (*pebble.Iterator, error) {
		lo, hi := storage.TableBounds(t)
		return snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	}
	a, err := open(ta)
	if err != nil {
		return 0, err
	}
	defer a.Close()
	b, err := open(tb)
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
			return 0, fmt.Errorf("%s: row %s is in %s but missing from %s", check, describeKey(ka, s), na, nb)
		case !okA || c > 0:
			return 0, fmt.Errorf("%s: row %s is in %s but not in %s", check, describeKey(kb, s), nb, na)
		}
		if !bytes.Equal(a.Value(), b.Value()) {
			ra, _ := row.DecodeValue(nil, a.Value())
			rb, _ := row.DecodeValue(nil, b.Value())
			return 0, fmt.Errorf("%s: row %s differs: %s has %v, %s has %v", check, describeKey(ka, s), na, ra, nb, rb)
		}
		okA, okB = a.Next(), b.Next()
	}
	if err := a.Error(); err != nil {
		return 0, err
	}
	return n, b.Error()
}

// describeKey renders a vnode|pk key suffix as "vnode 7 pk (42)".
func describeKey(k []byte, s *row.Schema) string {
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
