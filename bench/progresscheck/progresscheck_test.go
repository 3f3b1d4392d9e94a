package progresscheck

import (
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/backfill-bench/backfill-bench/bench/backfill"
	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/source"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/stream"
	"github.com/backfill-bench/backfill-bench/workloads"
)

// rowsOfA returns the rows of A at the latest epoch, by vnode, each vnode's in key
// order.
func rowsOfA(t *testing.T, j *testJob) [][]row.Row {
	t.Helper()
	snap := j.store.Latest()
	defer snap.Release()
	lo, hi := storage.TableBounds(storage.TableUpstream)
	it, err := snap.Snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	out := make([][]row.Row, j.cfg.Vnodes)
	for ok := it.First(); ok; ok = it.Next() {
		r, err := row.DecodeValue(nil, it.Value())
		if err != nil {
			t.Fatal(err)
		}
		v := storage.KeyVnode(it.Key())
		out[v] = append(out[v], r)
	}
	return out
}

// TestProgressCheckCatches feeds the progress check an actor's emitted rows and an
// epoch's state rows, right and wrong: each wrong state row, and each wrong
// emission, fails the commit with the epoch and the vnode.
func TestProgressCheckCatches(t *testing.T) {
	skipUnchecked(t)
	const vnodes = 4
	type stateEdit func(states []backfill.VnodeState, a [][]row.Row) // a: A's rows by vnode
	tests := []struct {
		name    string
		scan    backfill.Scan
		persist bool
		edit    stateEdit
		dup     bool   // emit a row twice
		want    string // in the error; "" for none
	}{
		{"merged: right", backfill.Merged, true, nil, false, ""},
		{"per-vnode: right", backfill.PerVnode, true, nil, false, ""},
		{"persist=off: right", backfill.Merged, false, func(s []backfill.VnodeState, _ [][]row.Row) {}, false, ""},
		{"merged: position one row behind", backfill.Merged, true, func(s []backfill.VnodeState, _ [][]row.Row) {
			for i := range s {
				s[i].Pos = []row.Datum{row.I64(s[i].Pos[0].I - 1)}
			}
		}, false, "epoch 2, vnode 0: the state row has pos (8)"},
		{"merged: a row count off by one", backfill.Merged, true, func(s []backfill.VnodeState, _ [][]row.Row) { s[2].RowCount++ }, false, "epoch 2, vnode 2"},
		{"merged: finished before the scan ended", backfill.Merged, true, func(s []backfill.VnodeState, _ [][]row.Row) { s[1].Finished = true }, false, "epoch 2, vnode 1"},
		{"merged: a vnode's row missing", backfill.Merged, true, func(s []backfill.VnodeState, _ [][]row.Row) { s[3].Vnode = vnodes }, false, "epoch 2, vnode 3: no state row"},
		{"per-vnode: every vnode with one vnode's position", backfill.PerVnode, true, func(s []backfill.VnodeState, _ [][]row.Row) {
			for i := range s {
				s[i].Pos = s[0].Pos
			}
		}, false, "epoch 2, vnode 1"},
		{"per-vnode: finished while A has rows after the position", backfill.PerVnode, true, func(s []backfill.VnodeState, _ [][]row.Row) { s[3].Finished = true }, false, "epoch 2, vnode 3: persisted finished"},
		{"merged: a row emitted twice", backfill.Merged, true, nil, true, "emitted after"},
		{"per-vnode: a row emitted twice", backfill.PerVnode, true, nil, true, "emitted after"},
		{"persist=off wrote state", backfill.Merged, false, nil, false, "persist=off wrote a state row"},
		// The snapshot scan's creating epoch 2 (snapshot phase).
		{"snapshot: right", backfill.Snapshot, true, nil, false, ""},
		{"snapshot: position one row behind", backfill.Snapshot, true, func(s []backfill.VnodeState, a [][]row.Row) {
			s[0].Pos, s[0].RowCount = []row.Datum{a[0][0][0]}, 1 // its first row, not its second
		}, false, "creating epoch 2, vnode 0: the state row has pos ("},
		{"snapshot: a row count off by one", backfill.Snapshot, true, func(s []backfill.VnodeState, _ [][]row.Row) { s[2].RowCount-- }, false, "creating epoch 2, vnode 2"},
		{"snapshot: every vnode with one vnode's position", backfill.Snapshot, true, func(s []backfill.VnodeState, _ [][]row.Row) {
			for i := range s {
				s[i].Pos = s[0].Pos
			}
		}, false, "creating epoch 2, vnode 1"},
		{"snapshot: finished while the snapshot read has rows after the position", backfill.Snapshot, true, func(s []backfill.VnodeState, _ [][]row.Row) { s[3].Finished = true }, false, "creating epoch 2, vnode 3: persisted finished"},
		{"snapshot: a row emitted twice", backfill.Snapshot, true, nil, true, "emitted after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := prepare(t, 60, 1, vnodes, tt.persist, tt.scan)
			a := rowsOfA(t, j)
			pc, err := New(j.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer pc.Release()
			// What the scan emitted in epoch 2, and the state rows it implies.
			c := stream.NewChunk(64)
			states := make([]backfill.VnodeState, vnodes)
			if tt.scan == backfill.Merged { // ids 0..9 in pk order
				for id := range int64(10) {
					for v, rs := range a {
						for _, r := range rs {
							if r[0].I == id {
								c.Append(stream.Insert, r)
								states[v].RowCount++
							}
						}
					}
				}
				for v := range states {
					states[v].Vnode, states[v].Pos = uint16(v), []row.Datum{row.I64(9)}
				}
			} else { // two rows of each vnode
				for v, rs := range a {
					c.Append(stream.Insert, rs[0])
					c.Append(stream.Insert, rs[1])
					states[v] = backfill.VnodeState{Vnode: uint16(v), Pos: []row.Datum{rs[1][0]}, RowCount: 2}
				}
			}
			if tt.dup {
				c.Append(stream.Insert, c.Rows[c.Len()-1])
			}
			pc.actors[0].chunk(c)
			creating := tt.scan == backfill.Snapshot
			pc.actors[0].seal(2, creating)
			if tt.edit != nil {
				tt.edit(states, a)
			}
			b := j.store.DB.NewBatch()
			defer b.Close()
			if tt.persist || tt.edit == nil {
				for _, st := range states {
					if st.Vnode >= vnodes { // left out
						continue
					}
					if err := b.Set(backfill.AppendStateKey(nil, st.Vnode), backfill.AppendStateValue(nil, st, 1), nil); err != nil {
						t.Fatal(err)
					}
				}
			}
			parts := []backfill.Part{{Actor: 0, State: b, Creating: creating}}
			if creating {
				err = pc.CommitCreating(j.store, 2, parts)
			} else {
				err = pc.Commit(j.store, 2, parts)
			}
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("a right state failed the check: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// BenchmarkProgressCheckChunk measures the progress check's cost per snapshot row
// emitted (ns/row), the part of it inside a job's timed window that grows with
// the table, for a chunk of 256 rows (the default) over 256 vnodes in pk order (each scan
// kind's order check: over the actor for merged, per vnode for the others);
// compare with a job's cpu-ns/row.
func BenchmarkProgressCheckChunk(b *testing.B) {
	for _, scan := range []backfill.Scan{backfill.Merged, backfill.Snapshot} {
		b.Run("scan="+scan.Kind().Name, func(b *testing.B) {
			j := prepare(b, 1, 1, storage.DefaultVnodes, true, scan)
			pc, err := New(j.cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer pc.Release()
			ap := pc.actors[0]
			c := stream.NewChunk(256)
			var r row.Row
			for id := range int64(256) {
				r = j.wl.Row(r, 1, id, 1)
				c.Append(stream.Insert, slices.Clone(r))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				ap.cur.head = nil // each round starts the scan again
				clear(ap.cur.emitted)
				ap.chunk(c)
			}
			if ap.cur.bad != nil {
				b.Fatal(ap.cur.bad)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*c.Len()), "ns/row")
		})
	}
}

// TestProgressCheckSnapshotLogPhase walks the progress check through a snapshot
// scan's creating epochs (the whole snapshot read in epoch 1, then replays) and
// the join: a replay before the snapshot is read, out of order, a snapshot row
// missing from B, a wrong creating_epoch row and a join that skips replayed
// epochs each fail.
func TestProgressCheckSnapshotLogPhase(t *testing.T) {
	skipUnchecked(t)
	const vnodes = 4
	j := prepare(t, 60, 1, vnodes, true, backfill.Snapshot)
	a := rowsOfA(t, j)
	pc, err := New(j.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Release()
	s := pc.replayed // the snapshot's upstream epoch
	ap := pc.actors[0]
	// Every state row finished at its vnode's last row of A.
	states := func() *pebble.Batch {
		b := j.store.DB.NewBatch()
		for v, rs := range a {
			st := backfill.VnodeState{Vnode: uint16(v), Pos: []row.Datum{rs[len(rs)-1][0]}, RowCount: int64(len(rs)), Finished: true}
			if err := b.Set(backfill.AppendStateKey(nil, st.Vnode), backfill.AppendStateValue(nil, st, 1), nil); err != nil {
				t.Fatal(err)
			}
		}
		return b
	}
	commit := func(seq, replay uint64, want string) {
		t.Helper()
		b := states()
		defer b.Close()
		ap.seal(seq, true)
		err := pc.CommitCreating(j.store, seq, []backfill.Part{{Actor: 0, State: b, Creating: true, Replayed: replay}})
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Fatalf("creating epoch %d replaying %d: err = %v, want %q", seq, replay, err, want)
		}
		if err != nil {
			ap.take(seq, true)
		}
	}
	commit(1, s+1, "before actor 0's snapshot was read")
	c := stream.NewChunk(64)
	for _, rs := range a {
		for _, r := range rs {
			c.Append(stream.Insert, r)
		}
	}
	ap.chunk(c)
	ap.exhaust()
	commit(1, 0, "")
	mv := j.store.DB.NewBatch() // B: the snapshot read
	for v, rs := range a {
		for i, r := range rs {
			if i == len(rs)-1 && v == vnodes-1 {
				continue // the actor's last row emitted, left out of B
			}
			if err := mv.Set(storage.AppendRowKey(nil, storage.TableMV, uint16(v), j.wl.Schema(), r), row.AppendValue(nil, r), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := j.store.CommitCreatingAsync(mv, 1, s, false); err != nil {
		t.Fatal(err)
	}
	if err := pc.CommittedCreating(j.store, 1); err == nil || !strings.Contains(err.Error(), "creating epoch 1, vnode 3: at actor 0's position") {
		t.Fatalf("B without the last snapshot row emitted: err = %v", err)
	}
	commit(2, s+2, "must be replayed in order")
	commit(2, s+1, "")
	if _, err := j.store.CommitCreatingAsync(j.store.DB.NewBatch(), 2, s, false); err != nil { // the replayed epoch not recorded
		t.Fatal(err)
	}
	if err := pc.CommittedCreating(j.store, 2); err == nil || !strings.Contains(err.Error(), "creating_epoch holds") {
		t.Fatalf("a creating_epoch row without the replayed epoch: err = %v", err)
	}
	commit(3, 0, "replays nothing after the log phase began")
	b := j.store.DB.NewBatch()
	defer b.Close()
	ap.seal(s+3, false)
	if err := pc.Commit(j.store, s+3, []backfill.Part{{Actor: 0, State: b}}); err == nil || !strings.Contains(err.Error(), "the epochs between were not replayed") {
		t.Fatalf("a join after a skipped epoch: err = %v", err)
	}
}

// testJob is a DB with table A loaded, as a prepared job has it, and the check's
// configuration for a job on it.
type testJob struct {
	cfg   Config
	wl    *workloads.Workload
	store *storage.Store
}

// prepare loads A (the narrow workload, seed 1) as pipeline.Prepare does.
func prepare(t testing.TB, rows int64, par, vnodes int, persist bool, scan backfill.Scan) *testJob {
	t.Helper()
	store, err := storage.Open(storage.Options{FS: vfs.NewMem(), Dir: "/db"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	wl, err := workloads.Parse("narrow", 1)
	if err != nil {
		t.Fatal(err)
	}
	mix, _ := wl.Mix()
	src, err := source.New(source.Config{Workload: wl, Seed: 1, InitialRows: rows, Mix: mix, Keys: wl, ChunkSize: 1024, VnodeCount: vnodes, Par: par})
	if err != nil {
		t.Fatal(err)
	}
	if err := src.LoadInitial(store.DB, 4096); err != nil {
		t.Fatal(err)
	}
	if err := store.CommitEpoch(store.DB.NewBatch(), 1, true); err != nil {
		t.Fatal(err)
	}
	return &testJob{cfg: Config{Schema: wl.Schema(), Scan: scan, Persist: persist, Par: par, Vnodes: vnodes, Store: store}, wl: wl, store: store}
}

// skipUnchecked skips a test of the check in a build that compiles it out (tag
// noprogresscheck, for measuring its cost).
func skipUnchecked(t *testing.T) {
	t.Helper()
	if !Enabled {
		t.Skip("built with tag noprogresscheck: the progress check is compiled out")
	}
}
