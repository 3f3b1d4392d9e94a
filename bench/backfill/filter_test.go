package backfill

import (
	"context"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/stream"
)

// groupKey is a grouped MV's key: (channel asc, window_start desc, auction asc),
// distributed by (channel, window_start), like the groups workload.
var groupKey = row.Schema{
	Columns: []row.Column{{Name: "channel", Kind: row.String}, {Name: "window_start", Kind: row.Timestamp}, {Name: "auction", Kind: row.Int64}},
	PK:      []int{0, 1, 2}, PKDesc: []bool{false, true, false}, DistKey: []int{0, 1},
}

// TestFilterUpToCompositeKey: the merged filter orders by every key column, each in
// its direction; a filter that compares only the first column keeps the rows after
// the position that share its channel.
func TestFilterUpToCompositeKey(t *testing.T) {
	pos := []row.Datum{row.Str("Google"), row.TS(100), row.I64(50)}
	tests := []struct {
		name string
		key  row.Row
		want bool
	}{
		{"at pos", row.Row{row.Str("Google"), row.TS(100), row.I64(50)}, true},
		{"last column below", row.Row{row.Str("Google"), row.TS(100), row.I64(49)}, true},
		{"last column above", row.Row{row.Str("Google"), row.TS(100), row.I64(51)}, false},
		{"descending column: a later window sorts before", row.Row{row.Str("Google"), row.TS(110), row.I64(99)}, true},
		{"descending column: an earlier window sorts after", row.Row{row.Str("Google"), row.TS(90), row.I64(1)}, false},
		{"first column below", row.Row{row.Str("Apple"), row.TS(0), row.I64(0)}, true},
		{"first column above", row.Row{row.Str("Yahoo"), row.TS(500), row.I64(0)}, false},
		{"a prefix of the first column sorts before", row.Row{row.Str("Goo"), row.TS(0), row.I64(99)}, true},
		{"an extension by a zero byte sorts after", row.Row{row.Str("Google\x00"), row.TS(500), row.I64(0)}, false},
	}
	c := stream.NewChunk(len(tests))
	for _, tt := range tests {
		c.Append(stream.Insert, tt.key)
	}
	FilterUpTo(c, &groupKey, pos)
	for i, tt := range tests {
		if c.Visible(i) != tt.want {
			t.Errorf("%s: pk %v visible %v, want %v (pos %v)", tt.name, tt.key, c.Visible(i), tt.want, row.Row(pos))
		}
	}
}

// keysByVnode returns, for each of vnodes vnodes, the first n int keys of kv that
// hash to it, ascending.
func keysByVnode(vnodes, n int) [][]int64 {
	vn := storage.NewVnoder(&kv, vnodes)
	out := make([][]int64, vnodes)
	for k, full := int64(0), 0; full < vnodes; k++ {
		v := vn.Of(row.Row{row.I64(k), row.Str("")})
		if len(out[v]) < n {
			if out[v] = append(out[v], k); len(out[v]) == n {
				full++
			}
		}
	}
	return out
}

// TestFilterPerVnode: the per-vnode filter goes by the state of each row's vnode:
// nothing of a vnode not started, pk ≤ position of one in progress, everything of
// a finished one.
func TestFilterPerVnode(t *testing.T) {
	keys := keysByVnode(3, 5)
	pos := keys[1][2]
	e, err := NewExecutor(Config{Vnodes: allVnodes(3), Schema: &kv, VnodeCount: 3, ChunkSize: 16, Scan: PerVnode, Resume: []VnodeState{
		{Vnode: 0}, // not started
		{Vnode: 1, Pos: []row.Datum{row.I64(pos)}, RowCount: 3}, // in progress at its third key
		{Vnode: 2, Pos: []row.Datum{row.I64(keys[2][1])}, Finished: true, RowCount: 5},
	}}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	c := stream.NewChunk(16)
	var want []bool
	for v, ks := range keys {
		for _, k := range ks {
			c.Append(stream.Insert, row.Row{row.I64(k), row.Str("x")})
			want = append(want, v == 2 || v == 1 && k <= pos)
		}
	}
	e.strat.(*perVnodeScan).vnodeProgress.filter(c)
	for i, r := range c.Rows {
		if c.Visible(i) != want[i] {
			t.Errorf("key %d (vnode %d): visible %v, want %v", r[0].I, storage.NewVnoder(&kv, 3).Of(r), c.Visible(i), want[i])
		}
	}
}

// TestResumePerVnodeMixedStates resumes a per-vnode actor whose vnodes were left
// finished, in progress and not started: it emits exactly the rows each has left
// (none of the finished one, those after the position of the one in progress, all
// of the one not started), and persists every vnode finished with its row count.
func TestResumePerVnodeMixedStates(t *testing.T) {
	const vnodes = 4
	keys := keysByVnode(vnodes, 6)
	store, err := storage.Open(storage.Options{FS: vfs.NewMem(), Dir: "/db"})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	b := store.DB.NewBatch()
	vn := storage.NewVnoder(&kv, vnodes)
	for _, ks := range keys {
		for _, k := range ks {
			r := row.Row{row.I64(k), row.Str("x")}
			b.Set(storage.AppendRowKey(nil, storage.TableUpstream, vn.Of(r), &kv, r), row.AppendValue(nil, r), nil)
		}
	}
	if err := store.CommitEpoch(b, 1, true); err != nil {
		t.Fatal(err)
	}
	resume := []VnodeState{
		{Vnode: 0, Pos: []row.Datum{row.I64(keys[0][5])}, Finished: true, RowCount: 6},
		{Vnode: 1, Pos: []row.Datum{row.I64(keys[1][3])}, RowCount: 4},
		{Vnode: 2},
		{Vnode: 3, Pos: []row.Datum{row.I64(keys[3][0])}, RowCount: 1},
	}
	wantRows := map[int64]bool{}
	for _, k := range slices.Concat(keys[1][4:], keys[2], keys[3][1:]) {
		wantRows[k] = true
	}
	input := make(chan stream.Message, 1)
	var parts []Part
	e, err := NewExecutor(Config{Vnodes: allVnodes(vnodes), Schema: &kv, VnodeCount: vnodes, ChunkSize: 2, Scan: PerVnode, Persist: true, Resume: resume},
		Env{Store: store, Input: input,
			Deliver: func(_ context.Context, p Part) error { parts = append(parts, p); return nil },
			OnExhausted: func() {
				input <- stream.Message{Barrier: &stream.Barrier{Epoch: stream.Epoch{Prev: 1, Curr: 2}, Final: true}}
			},
		})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(parts) != 1 {
		t.Fatalf("%d parts, want 1", len(parts))
	}
	defer parts[0].Close()
	got := map[int64]bool{}
	for _, mv := range parts[0].MV {
		r := mv.Reader()
		for {
			_, _, val, ok, err := r.Next()
			if err != nil || !ok {
				break
			}
			rw, err := row.DecodeValue(nil, val)
			if err != nil {
				t.Fatal(err)
			}
			if got[rw[0].I] {
				t.Errorf("key %d emitted twice", rw[0].I)
			}
			got[rw[0].I] = true
		}
	}
	for k := range wantRows {
		if !got[k] {
			t.Errorf("key %d (vnode %d) was left to scan but not emitted", k, vn.Of(row.Row{row.I64(k), row.Str("")}))
		}
	}
	for k := range got {
		if !wantRows[k] {
			t.Errorf("key %d (vnode %d) emitted, but its vnode's state says it was already", k, vn.Of(row.Row{row.I64(k), row.Str("")}))
		}
	}
	states := map[uint16]VnodeState{}
	r := parts[0].State.Reader()
	for {
		_, _, val, ok, err := r.Next()
		if err != nil || !ok {
			break
		}
		st, err := DecodeState(val, 1)
		if err != nil {
			t.Fatal(err)
		}
		states[st.Vnode] = st
	}
	for v := uint16(1); v < vnodes; v++ { // vnode 0 was finished already: no change to write
		st, ok := states[v]
		if !ok || !st.Finished || st.RowCount != 6 || st.Pos == nil || st.Pos[0].I != keys[v][5] {
			t.Errorf("vnode %d: state %+v (written %v), want finished at key %d with 6 rows", v, st, ok, keys[v][5])
		}
	}
	if _, ok := states[0]; ok {
		t.Errorf("vnode 0, finished before the resume, was written again")
	}
}
