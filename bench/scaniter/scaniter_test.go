package scaniter

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/backfill-bench/backfill-bench/bench/memcmp"
	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/storage"
)

var kv = row.Schema{
	Columns: []row.Column{{Name: "k", Kind: row.Int64}, {Name: "v", Kind: row.String}},
	PK:      []int{0},
	DistKey: []int{0},
}

// testDB writes n random keys spread over vnodes into table A and returns the DB and
// the sorted pks.
func testDB(t testing.TB, n, vnodes int) (*pebble.DB, []int64) {
	db, err := pebble.Open("/db", &pebble.Options{FS: vfs.NewMem(), Logger: storage.Logger(nil)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	r := rand.New(rand.NewPCG(1, 1))
	vn := storage.NewVnoder(&kv, vnodes)
	b := db.NewBatch()
	seen := map[int64]bool{}
	var keys []int64
	for len(keys) < n {
		k := r.Int64N(1_000_000) - 500_000
		if seen[k] {
			continue
		}
		seen[k] = true
		keys = append(keys, k)
		rw := row.Row{row.I64(k), row.Str(fmt.Sprint(k))}
		b.Set(storage.AppendRowKey(nil, storage.TableUpstream, vn.Of(rw), &kv, rw), row.AppendValue(nil, rw), nil)
		// Other tables around A must not leak into the scan.
		b.Set(storage.AppendRowKey(nil, storage.TableMV, vn.Of(rw), &kv, rw), nil, nil)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	return db, keys
}

func allVnodes(n int) []uint16 {
	v := make([]uint16, n)
	for i := range v {
		v[i] = uint16(i)
	}
	return v
}

func scanAll(t *testing.T, snap *storage.Snapshot, vnodes []uint16, after []byte) []int64 {
	t.Helper()
	got, _ := scanMerged(t, snap, nil, vnodes, after)
	return got
}

// scanMerged returns the pks and the second column of every row of a merged scan,
// checking that they come in pk order.
func scanMerged(t *testing.T, snap *storage.Snapshot, ov *storage.Writes, vnodes []uint16, after []byte) ([]int64, []string) {
	t.Helper()
	m, err := NewMergeIter(snap, ov, storage.TableUpstream, vnodes, after)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var keys []int64
	var vals []string
	var prev []byte
	for {
		k, v, ok := m.Next()
		if !ok {
			break
		}
		if prev != nil && bytes.Compare(prev, k[storage.PrefixLen:]) >= 0 {
			t.Fatalf("out of order: %x after %x", k, prev)
		}
		prev = append(prev[:0], k[storage.PrefixLen:]...)
		r, err := row.DecodeValue(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		keys, vals = append(keys, r[0].I), append(vals, r[1].S)
	}
	if err := m.Err(); err != nil {
		t.Fatal(err)
	}
	return keys, vals
}

func TestMergeIterOrderAndResume(t *testing.T) {
	for _, vnodes := range []int{1, 2, 3, 7, 256} {
		t.Run(fmt.Sprint("vnodes=", vnodes), func(t *testing.T) {
			db, keys := testDB(t, 2000, vnodes)
			snap := storage.OneGroup(db.NewSnapshot())
			defer snap.Close()
			if got := scanAll(t, snap, allVnodes(vnodes), nil); !slices.Equal(got, keys) {
				t.Fatalf("merged scan returned %d keys, want the %d sorted keys", len(got), len(keys))
			}
			// Resuming after a position returns exactly the keys above it, whether or
			// not the position itself exists.
			for _, pos := range []int64{keys[0], keys[999], keys[999] + 1, keys[len(keys)-1], -1 << 40} {
				after := memcmp.AppendKey(nil, []row.Datum{row.I64(pos)}, nil)
				i, _ := slices.BinarySearch(keys, pos+1)
				if got := scanAll(t, snap, allVnodes(vnodes), after); !slices.Equal(got, keys[i:]) {
					t.Errorf("after %d: got %d keys, want %d", pos, len(got), len(keys)-i)
				}
			}
		})
	}
}

// TestVnodeIter: the per-vnode scan returns each vnode's rows in pk order, takes the
// vnodes in turn, resumes each after its own position, skips done vnodes, and reports
// each vnode once when its rows run out.
func TestVnodeIter(t *testing.T) {
	const vnodes = 7
	db, keys := testDB(t, 500, vnodes)
	snap := storage.OneGroup(db.NewSnapshot())
	defer snap.Close()
	vn := storage.NewVnoder(&kv, vnodes)
	want := make([][]int64, vnodes) // each vnode's keys, sorted
	for _, k := range keys {
		v := vn.Of(row.Row{row.I64(k), row.Str("")})
		want[v] = append(want[v], k)
	}
	after := make([][]byte, vnodes)
	done := make([]bool, vnodes)
	done[2] = true                                                          // completed: not scanned
	after[3] = memcmp.AppendKey(nil, []row.Datum{row.I64(want[3][9])}, nil) // resumes after its 10th key
	after[4] = memcmp.AppendKey(nil, []row.Datum{row.I64(1 << 40)}, nil)    // past its last key: ends at once
	m, err := NewVnodeIter(snap, nil, storage.TableUpstream, allVnodes(vnodes), after, done)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	got := make([][]int64, vnodes)
	var order []uint16
	exhausted := map[int]int{}
	for _, i := range m.Exhausted() {
		exhausted[i]++
	}
	for {
		k, v, ok := m.Next()
		for _, i := range m.Exhausted() {
			exhausted[i]++
		}
		if !ok {
			break
		}
		r, err := row.DecodeValue(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		vnode := storage.KeyVnode(k)
		got[vnode] = append(got[vnode], r[0].I)
		order = append(order, vnode)
	}
	if err := m.Err(); err != nil {
		t.Fatal(err)
	}
	want[2], want[3], want[4] = nil, want[3][10:], nil
	for v := range vnodes {
		if !slices.Equal(got[v], want[v]) {
			t.Errorf("vnode %d: got %d keys, want %d", v, len(got[v]), len(want[v]))
		}
		if n := exhausted[v]; v == 2 && n != 0 || v != 2 && n != 1 {
			t.Errorf("vnode %d reported exhausted %d times", v, n)
		}
	}
	// Interleaved: the first rows come one from each live vnode in turn.
	if wantStart := []uint16{0, 1, 3, 5, 6, 0, 1}; !slices.Equal(order[:len(wantStart)], wantStart) {
		t.Errorf("scan order starts %v, want %v", order[:len(wantStart)], wantStart)
	}
}

// BenchmarkMergeIter measures the hot merge path: a full merged scan over vnodes of a
// table the size of the default job's (1M rows), read from sstables as a job reads
// it. Smaller tables stay in cache and hide what stepping many iterators costs.
func BenchmarkMergeIter(b *testing.B) {
	for _, vnodes := range []int{1, 16, 128, 256} {
		b.Run(fmt.Sprint("vnodes=", vnodes), func(b *testing.B) {
			db, keys := testDB(b, 1_000_000, vnodes)
			if err := db.Flush(); err != nil {
				b.Fatal(err)
			}
			snap := storage.OneGroup(db.NewSnapshot())
			defer snap.Close()
			b.ResetTimer()
			rows := 0
			for i := 0; i < b.N; i++ {
				m, err := NewMergeIter(snap, nil, storage.TableUpstream, allVnodes(vnodes), nil)
				if err != nil {
					b.Fatal(err)
				}
				for _, _, ok := m.Next(); ok; _, _, ok = m.Next() {
					rows++
				}
				if err := m.Close(); err != nil {
					b.Fatal(err)
				}
			}
			if rows != b.N*len(keys) {
				b.Fatalf("scanned %d rows, want %d", rows, b.N*len(keys))
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
