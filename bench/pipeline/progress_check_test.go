package pipeline

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/backfill-bench/backfill-bench/bench/backfill"
	"github.com/backfill-bench/backfill-bench/bench/memcmp"
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
			defer pc.release()
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
				err = pc.commitCreating(j.store, 2, parts)
			} else {
				err = pc.commit(j.store, 2, parts)
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
			// The snapshot scan's state rows are in its creating epochs; an upstream
			// epoch's trace carries those committed before it, as timing has it.
			upstreamState := scan != backfill.Snapshot
			boundary := int64(0)
			for i, ea := range a.Epochs {
				eb := b.Epochs[i]
				if ea.Changes != eb.Changes || ea.SnapshotRows != eb.SnapshotRows || upstreamState && ea.StateRows != eb.StateRows {
					t.Errorf("epoch %d: %d changes, %d snapshot rows, %d state rows, then %d, %d, %d", ea.Epoch, ea.Changes, ea.SnapshotRows, ea.StateRows, eb.Changes, eb.SnapshotRows, eb.StateRows)
				}
				boundary += ea.Changes - cfg.ChangesPerEpoch
			}
			if len(a.Creating) != len(b.Creating) {
				t.Fatalf("%d creating epochs, then %d", len(a.Creating), len(b.Creating))
			}
			for i, ea := range a.Creating {
				if eb := b.Creating[i]; ea.SnapshotRows != eb.SnapshotRows || ea.StateRows != eb.StateRows || ea.Replayed != eb.Replayed {
					t.Errorf("creating epoch %d: %d snapshot rows, %d state rows, replayed %d, then %d, %d, %d", ea.Epoch, ea.SnapshotRows, ea.StateRows, ea.Replayed, eb.SnapshotRows, eb.StateRows, eb.Replayed)
				}
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
	defer pc.release()
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

// alterStates returns an alterPart hook that rewrites, with edit, every state row
// of the parts keep selects.
func alterStates(t *testing.T, j *Job, keep func(*backfill.Part) bool, edit func(st *backfill.VnodeState)) func(*backfill.Part) {
	pkLen := len(j.wl.Schema().PK)
	return func(p *backfill.Part) {
		if !keep(p) || p.State == nil {
			return
		}
		nb := j.store.DB.NewBatch()
		r := p.State.Reader()
		for {
			_, k, v, ok, err := r.Next()
			if err != nil {
				t.Error(err)
			}
			if !ok || err != nil {
				break
			}
			st, err := backfill.DecodeState(v, pkLen)
			if err != nil {
				t.Error(err)
				break
			}
			st.Pos = slices.Clone(st.Pos)
			edit(&st)
			if err := nb.Set(k, backfill.AppendStateValue(nil, st, pkLen), nil); err != nil {
				t.Error(err)
			}
		}
		p.State.Close()
		p.State = nb
	}
}

// TestProgressCheckCatchesSnapshotJob runs ordinary snapshot-scan jobs with a bug
// injected in the state rows the actors deliver: the progress check fails each
// job at the creating epoch and vnode it first shows in.
func TestProgressCheckCatchesSnapshotJob(t *testing.T) {
	skipUnchecked(t)
	snapshotPhase := func(p *backfill.Part) bool { return p.Creating && p.Replayed == 0 }
	tests := []struct {
		name string
		keep func(*backfill.Part) bool
		edit func(j *Job, st *backfill.VnodeState)
		want string
	}{
		{"progress one row behind", snapshotPhase, func(j *Job, st *backfill.VnodeState) {
			if st.Pos == nil {
				return
			}
			// The vnode's row before the position, in the snapshot the scan reads.
			snap := j.store.Latest()
			defer snap.Release()
			lo, _ := storage.VnodeBounds(storage.TableUpstream, st.Vnode)
			hi := memcmp.AppendKey(storage.AppendPrefix(nil, storage.TableUpstream, st.Vnode), st.Pos, j.wl.Schema().PKDesc)
			it, err := snap.Snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
			if err != nil {
				return
			}
			defer it.Close()
			st.RowCount--
			if it.Last() {
				r, _ := row.DecodeValue(nil, it.Value())
				st.Pos = j.wl.Schema().PKOf(nil, r)
			}
		}, "the state row has pos"},
		{"a vnode finished too early", snapshotPhase, func(j *Job, st *backfill.VnodeState) { st.Finished = true }, "persisted finished"},
		{"log phase: a finished vnode persisted unfinished", func(p *backfill.Part) bool { return p.Replayed > 0 },
			func(j *Job, st *backfill.VnodeState) { st.Finished = false }, "persisted unfinished after it was persisted finished"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := snapshotJob(4000, 2, 16, true)
			j, err := Prepare(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			j.alterPart = alterStates(t, j, tt.keep, func(st *backfill.VnodeState) { tt.edit(j, st) })
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err = j.Run(ctx)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !epochVnode.MatchString(err.Error()) {
				t.Fatalf("err = %v, want one with %q, naming the creating epoch and the vnode", err, tt.want)
			}
			t.Log(err)
		})
	}
}

var epochVnode = regexp.MustCompile(`creating epoch \d+, vnode \d+`)

// TestProgressCheckSnapshotLogPhase walks the progress check through a snapshot
// scan's creating epochs (the whole snapshot read in epoch 1, then replays) and
// the join: a replay before the snapshot is read, out of order, a snapshot row
// missing from B, a wrong creating_epoch row and a join that skips replayed
// epochs each fail.
func TestProgressCheckSnapshotLogPhase(t *testing.T) {
	skipUnchecked(t)
	const vnodes = 4
	cfg := Default()
	cfg.Rows, cfg.Par, cfg.Vnodes, cfg.Persist, cfg.Scan, cfg.SettleWait = 60, 1, vnodes, true, backfill.Snapshot, time.Millisecond
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
	defer pc.release()
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
		err := pc.commitCreating(j.store, seq, []backfill.Part{{Actor: 0, State: b, Creating: true, Replayed: replay}})
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
	if err := j.store.CommitCreating(mv, 1, s, false); err != nil {
		t.Fatal(err)
	}
	if err := pc.committedCreating(j.store, 1); err == nil || !strings.Contains(err.Error(), "creating epoch 1, vnode 3: at actor 0's position") {
		t.Fatalf("B without the last snapshot row emitted: err = %v", err)
	}
	commit(2, s+2, "must be replayed in order")
	commit(2, s+1, "")
	if err := j.store.CommitCreating(j.store.DB.NewBatch(), 2, s, false); err != nil { // the replayed epoch not recorded
		t.Fatal(err)
	}
	if err := pc.committedCreating(j.store, 2); err == nil || !strings.Contains(err.Error(), "creating_epoch holds") {
		t.Fatalf("a creating_epoch row without the replayed epoch: err = %v", err)
	}
	commit(3, 0, "replays nothing after the log phase began")
	b := j.store.DB.NewBatch()
	defer b.Close()
	ap.seal(s+3, false)
	if err := pc.commit(j.store, s+3, []backfill.Part{{Actor: 0, State: b}}); err == nil || !strings.Contains(err.Error(), "the epochs between were not replayed") {
		t.Fatalf("a join after a skipped epoch: err = %v", err)
	}
}

// skipUnchecked skips a test of the progress check in a build that compiles it
// out (tag noprogresscheck, for measuring its cost).
func skipUnchecked(t *testing.T) {
	t.Helper()
	if !checkProgress {
		t.Skip("built with tag noprogresscheck: the progress check is compiled out")
	}
}
