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
	"github.com/backfill-bench/backfill-bench/bench/progresscheck"
	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/storage"
)

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
	if !progresscheck.Enabled {
		t.Skip("built with tag noprogresscheck: the progress check is compiled out")
	}
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
