package pipeline

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/backfill-bench/backfill-bench/bench/backfill"
	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/stream"
)

// rowsOfA returns the rows of A at the latest epoch, by vnode, each vnode's in key
// order.
func rowsOfA(t *testing.T, j *Job) [][]row.Row {
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
	const vnodes = 4
	type stateEdit func(states []backfill.VnodeState)
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
		{"persist=off: right", backfill.Merged, false, func(s []backfill.VnodeState) {}, false, ""},
		{"merged: position one row behind", backfill.Merged, true, func(s []backfill.VnodeState) {
			for i := range s {
				s[i].Pos = []row.Datum{row.I64(s[i].Pos[0].I - 1)}
			}
		}, false, "epoch 2, vnode 0: the state row has pos (8)"},
		{"merged: a row count off by one", backfill.Merged, true, func(s []backfill.VnodeState) { s[2].RowCount++ }, false, "epoch 2, vnode 2"},
		{"merged: finished before the scan ended", backfill.Merged, true, func(s []backfill.VnodeState) { s[1].Finished = true }, false, "epoch 2, vnode 1"},
		{"merged: a vnode's row missing", backfill.Merged, true, func(s []backfill.VnodeState) { s[3].Vnode = vnodes }, false, "epoch 2, vnode 3: no state row"},
		{"per-vnode: every vnode with one vnode's position", backfill.PerVnode, true, func(s []backfill.VnodeState) {
			for i := range s {
				s[i].Pos = s[0].Pos
			}
		}, false, "epoch 2, vnode 1"},
		{"per-vnode: finished while A has rows after the position", backfill.PerVnode, true, func(s []backfill.VnodeState) { s[3].Finished = true }, false, "epoch 2, vnode 3: persisted finished"},
		{"merged: a row emitted twice", backfill.Merged, true, nil, true, "emitted after"},
		{"per-vnode: a row emitted twice", backfill.PerVnode, true, nil, true, "emitted after"},
		{"persist=off wrote state", backfill.Merged, false, nil, false, "persist=off wrote a state row"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Default()
			cfg.Rows, cfg.Par, cfg.Vnodes, cfg.Persist, cfg.Scan, cfg.SettleWait = 60, 1, vnodes, tt.persist, tt.scan, time.Millisecond
			j, err := Prepare(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			a := rowsOfA(t, j)
			pc, err := newProgressCheck(j)
			if err != nil {
				t.Fatal(err)
			}
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
			pc.actors[0].seal(2, false)
			if tt.edit != nil {
				tt.edit(states)
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
			err = pc.commit(j.store, 2, []backfill.Part{{Actor: 0, State: b}})
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("a right state failed the check: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestCompositeKeyWorkloadEveryScan runs every scan strategy over the grouped-MV
// table (a three-column key, one column descending, distributed by a prefix of
// it) with changes aimed at the scan positions, work-driven, twice: each run
// verifies B == A and every persisted state row (the progress check), both runs
// do the same work, and the boundary changes happened.
func TestCompositeKeyWorkloadEveryScan(t *testing.T) {
	for _, name := range backfill.Scans {
		scan, err := backfill.ParseScan(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) {
			cfg := Default()
			cfg.Workload = "groups+boundary-heavy"
			cfg.Rows, cfg.Par, cfg.Vnodes, cfg.Persist, cfg.Scan = 12_000, 2, 32, true, scan
			cfg.BarrierRows, cfg.ChangesPerEpoch, cfg.ChunkSize = 600, 40, 128
			cfg.SettleWait = 100 * time.Millisecond
			a, _ := runJob(t, cfg)
			b, _ := runJob(t, cfg)
			if len(a.Epochs) != len(b.Epochs) || a.Logical != b.Logical {
				t.Fatalf("%d epochs, %+v logical bytes, then %d, %+v", len(a.Epochs), a.Logical, len(b.Epochs), b.Logical)
			}
			boundary := int64(0)
			for i, ea := range a.Epochs {
				if eb := b.Epochs[i]; ea.Changes != eb.Changes || ea.SnapshotRows != eb.SnapshotRows || ea.StateRows != eb.StateRows {
					t.Errorf("epoch %d: %d changes, %d snapshot rows, %d state rows, then %d, %d, %d", ea.Epoch, ea.Changes, ea.SnapshotRows, ea.StateRows, eb.Changes, eb.SnapshotRows, eb.StateRows)
				}
				boundary += ea.Changes - cfg.ChangesPerEpoch
			}
			// Half of 40 per epoch, less those whose key did not exist.
			if boundary < int64(len(a.Epochs))*10 {
				t.Errorf("%d boundary changes over %d epochs, want ≥ 10 an epoch", boundary, len(a.Epochs))
			}
		})
	}
}

// BenchmarkProgressCheckChunk measures the progress check's cost per snapshot row
// emitted (ns/row), the part of it inside a job's timed window that grows with
// the table; compare with a job's cpu-ns/row.
func BenchmarkProgressCheckChunk(b *testing.B) {
	cfg := Default()
	cfg.Rows, cfg.Par, cfg.Persist, cfg.SettleWait = 1, 1, true, time.Millisecond
	j, err := Prepare(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	pc, err := newProgressCheck(j)
	if err != nil {
		b.Fatal(err)
	}
	ap := pc.actors[0]
	c := stream.NewChunk(1024)
	var r row.Row
	for id := range int64(1024) {
		r = j.wl.Row(r, 1, id, 1)
		c.Append(stream.Insert, slices.Clone(r))
	}
	b.ResetTimer()
	for range b.N {
		ap.cur.head = nil
		clear(ap.cur.emitted)
		ap.chunk(c)
	}
	if ap.cur.bad != nil {
		b.Fatal(ap.cur.bad)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*c.Len()), "ns/row")
}
