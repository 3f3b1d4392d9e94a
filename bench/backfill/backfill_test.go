package backfill

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
	"github.com/backfill-bench/backfill-bench/bench/scaniter"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/stream"
)

var kv = row.Schema{
	Columns: []row.Column{{Name: "k", Kind: row.Int64}, {Name: "v", Kind: row.String}},
	PK:      []int{0},
	DistKey: []int{0},
}

func chunkOf(ops []stream.Op, keys []int64) *stream.Chunk {
	c := stream.NewChunk(len(ops))
	for i, op := range ops {
		c.Append(op, row.Row{row.I64(keys[i]), row.Str("x")})
	}
	return c
}

func TestFilterUpTo(t *testing.T) {
	I, D, UD, UI := stream.Insert, stream.Delete, stream.UpdateDelete, stream.UpdateInsert
	pos5 := []row.Datum{row.I64(5)}
	tests := []struct {
		name    string
		ops     []stream.Op
		keys    []int64
		pos     []row.Datum
		wantVis []bool
		wantOps []stream.Op
	}{
		{"before any snapshot row: all dropped", []stream.Op{I, D}, []int64{1, 2}, nil, []bool{false, false}, []stream.Op{I, D}},
		{"pk equal to pos is kept", []stream.Op{I, I, I}, []int64{4, 5, 6}, pos5, []bool{true, true, false}, []stream.Op{I, I, I}},
		{"deletes filtered like inserts", []stream.Op{D, D}, []int64{-3, 9}, pos5, []bool{true, false}, []stream.Op{D, D}},
		{"update pair below pos kept whole", []stream.Op{UD, UI}, []int64{2, 2}, pos5, []bool{true, true}, []stream.Op{UD, UI}},
		{"update pair above pos dropped whole", []stream.Op{UD, UI}, []int64{7, 7}, pos5, []bool{false, false}, []stream.Op{UD, UI}},
		{"update pair split: old kept becomes Delete", []stream.Op{UD, UI}, []int64{3, 8}, pos5, []bool{true, false}, []stream.Op{D, UI}},
		{"update pair split: new kept becomes Insert", []stream.Op{UD, UI}, []int64{8, 3}, pos5, []bool{false, true}, []stream.Op{UD, I}},
		{"pairs after singles", []stream.Op{I, UD, UI, UD, UI}, []int64{9, 1, 6, 6, 6}, pos5, []bool{false, true, false, false, false}, []stream.Op{I, D, UI, UD, UI}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := chunkOf(tt.ops, tt.keys)
			FilterUpTo(c, &kv, tt.pos)
			for i := range tt.ops {
				if c.Visible(i) != tt.wantVis[i] {
					t.Errorf("row %d (key %d): visible %v, want %v", i, tt.keys[i], c.Visible(i), tt.wantVis[i])
				}
			}
			if !slices.Equal(c.Ops, tt.wantOps) {
				t.Errorf("ops %v, want %v", c.Ops, tt.wantOps)
			}
		})
	}
}

func TestFilterKeepsEarlierInvisibility(t *testing.T) {
	c := chunkOf([]stream.Op{stream.Insert, stream.Insert}, []int64{1, 2})
	c.Vis = stream.NewBitmap(2, true)
	c.Vis.Set(0, false)
	FilterUpTo(c, &kv, []row.Datum{row.I64(10)})
	if c.Visible(0) || !c.Visible(1) {
		t.Errorf("visibility %v %v, want false true", c.Visible(0), c.Visible(1))
	}
}

func TestFilterDescendingPK(t *testing.T) {
	desc := kv
	desc.PKDesc = []bool{true}
	// Descending: the scan goes 9, 8, …; having reached 5, rows 9..5 were emitted.
	c := chunkOf([]stream.Op{stream.Insert, stream.Insert, stream.Insert}, []int64{9, 5, 4})
	FilterUpTo(c, &desc, []row.Datum{row.I64(5)})
	if !c.Visible(0) || !c.Visible(1) || c.Visible(2) {
		t.Errorf("visibility %v %v %v, want true true false", c.Visible(0), c.Visible(1), c.Visible(2))
	}
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

func TestStateRoundTrip(t *testing.T) {
	for _, st := range []VnodeState{
		{Vnode: 3, Pos: nil, Finished: false, RowCount: 0},
		{Vnode: 65535, Pos: []row.Datum{row.I64(-9), row.Str("a\x00")}, Finished: true, RowCount: 1 << 40},
	} {
		pkLen := 2
		got, err := DecodeState(AppendStateValue(nil, st, pkLen), pkLen)
		if err != nil {
			t.Fatal(err)
		}
		if got.Vnode != st.Vnode || got.Finished != st.Finished || got.RowCount != st.RowCount || !slices.Equal(got.Pos, st.Pos) {
			t.Errorf("got %+v, want %+v", got, st)
		}
	}
	if _, err := DecodeState(AppendStateValue(nil, VnodeState{}, 1), 2); err == nil {
		t.Error("decoding with the wrong pk length: no error")
	}
}

// BenchmarkFilterUpTo measures the pk ≤ pos filter on a buffered upstream chunk.
func BenchmarkFilterUpTo(b *testing.B) {
	const n = 1024
	ops := make([]stream.Op, n)
	keys := make([]int64, n)
	for i := range keys {
		keys[i] = int64(i * 7 % n)
	}
	pos := []row.Datum{row.I64(n / 2)}
	c := chunkOf(ops, keys)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c.Vis = nil
		FilterUpTo(c, &kv, pos)
	}
	if got := c.Cardinality(); got != n/2+1 {
		b.Fatalf("%d rows visible, want %d", got, n/2+1)
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkPersistState measures writing one actor's state rows at a barrier: one row
// per owned vnode, as the merged scan does.
func BenchmarkPersistState(b *testing.B) {
	for _, vnodes := range []int{1, 128, 256} {
		b.Run(fmt.Sprint("vnodes=", vnodes), func(b *testing.B) {
			db, _ := testDB(b, 1, 1)
			e, err := NewExecutor(Config{Vnodes: allVnodes(vnodes), Schema: &kv, VnodeCount: 256, ChunkSize: 1, Persist: true}, Env{})
			if err != nil {
				b.Fatal(err)
			}
			e.state = db.NewBatch()
			defer e.state.Close()
			m := e.strat.(*mergedScan)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				// A new position each time, so every call writes.
				m.pos = []row.Datum{row.I64(int64(i))}
				m.posKey = memcmp.AppendKey(m.posKey[:0], m.pos, nil)
				if err := m.persist(nil); err != nil {
					b.Fatal(err)
				}
				if e.state.Len() > 1<<20 {
					e.state.Reset()
				}
			}
			b.ReportMetric(float64(e.part.StateBytes)/float64(b.N), "state-B/op")
		})
	}
}

// scanMerged returns the pks and the second column of every row of a merged scan,
// checking that they come in pk order.
func scanMerged(t *testing.T, snap *storage.Snapshot, ov *storage.Writes, vnodes []uint16, after []byte) ([]int64, []string) {
	t.Helper()
	m, err := scaniter.NewMergeIter(snap, ov, storage.TableUpstream, vnodes, after)
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

// TestScanOverlay: a scan overlaid with writes the snapshot does not hold (new rows,
// updates, deletes of rows that exist and of rows that do not, over several epochs
// merged as an actor merges them) returns A as applying those writes would leave
// it, from any position, in pk order; the per-vnode scan returns the same rows.
func TestScanOverlay(t *testing.T) {
	const vnodes = 7
	db, keys := testDB(t, 1000, vnodes)
	snap := storage.OneGroup(db.NewSnapshot())
	defer snap.Close()
	vn := storage.NewVnoder(&kv, vnodes)
	r := rand.New(rand.NewPCG(5, 6))
	for round := range 20 {
		model := map[int64]string{}
		for _, k := range keys {
			model[k] = fmt.Sprint(k)
		}
		var epochs []*storage.Writes
		for e := range 1 + r.IntN(3) {
			w := &storage.Writes{}
			for range r.IntN(200) {
				k := keys[r.IntN(len(keys))] // an existing row
				if r.IntN(3) == 0 {
					k = r.Int64N(1_000_000) - 500_000 // mostly a new one
				}
				rw := row.Row{row.I64(k), row.Str(fmt.Sprint("e", e, "/", k))}
				key := storage.AppendRowKey(nil, storage.TableUpstream, vn.Of(rw), &kv, rw)
				if r.IntN(4) == 0 {
					w.Delete(key)
					delete(model, k)
				} else {
					w.Set(key, row.AppendValue(nil, rw))
					model[k] = rw[1].S
				}
			}
			w.Sort()
			epochs = append(epochs, w)
		}
		rv := &reopened{e: &Executor{cfg: Config{Vnodes: allVnodes(vnodes)}}}
		ov := rv.merge(epochs)
		pos := keys[r.IntN(len(keys))]
		if round%4 == 0 {
			pos = -1 << 40 // from the start
		}
		var wantKeys []int64
		for k := range model {
			if k > pos {
				wantKeys = append(wantKeys, k)
			}
		}
		slices.Sort(wantKeys)
		after := memcmp.AppendKey(nil, []row.Datum{row.I64(pos)}, nil)
		gotKeys, gotVals := scanMerged(t, snap, ov, allVnodes(vnodes), after)
		if !slices.Equal(gotKeys, wantKeys) {
			t.Fatalf("round %d (%d epochs): merged scan after %d returned %d keys, want %d", round, len(epochs), pos, len(gotKeys), len(wantKeys))
		}
		for i, k := range gotKeys {
			if gotVals[i] != model[k] {
				t.Fatalf("round %d: key %d has %q, want %q", round, k, gotVals[i], model[k])
			}
		}
		afters := make([][]byte, vnodes)
		for i := range afters {
			afters[i] = after
		}
		m, err := scaniter.NewVnodeIter(snap, ov, storage.TableUpstream, allVnodes(vnodes), afters, make([]bool, vnodes))
		if err != nil {
			t.Fatal(err)
		}
		var perVnode []int64
		for {
			_, v, ok := m.Next()
			if !ok {
				break
			}
			rw, err := row.DecodeValue(nil, v)
			if err != nil {
				t.Fatal(err)
			}
			perVnode = append(perVnode, rw[0].I)
		}
		m.Close()
		slices.Sort(perVnode)
		if !slices.Equal(perVnode, wantKeys) {
			t.Fatalf("round %d: per-vnode scan returned %d keys, want %d", round, len(perVnode), len(wantKeys))
		}
	}
}
