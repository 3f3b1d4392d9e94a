package backfill

import (
	"context"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/stream"
)

// memStore opens a store on an in-memory filesystem, closed when tb ends.
func memStore(tb testing.TB) *storage.Store {
	tb.Helper()
	s, err := storage.Open(storage.Options{FS: vfs.NewMem(), Dir: "/db"})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// snapshotStore is a store whose A holds keys 0..n-1 at epoch 1.
func snapshotStore(t *testing.T, n, vnodes int) (*storage.Store, *storage.Vnoder) {
	t.Helper()
	s := memStore(t)
	vn := storage.NewVnoder(&kv, vnodes)
	b := s.DB.NewBatch()
	for k := range n {
		r := row.Row{row.I64(int64(k)), row.Str("v1")}
		b.Set(storage.AppendRowKey(nil, storage.TableUpstream, vn.Of(r), &kv, r), row.AppendValue(nil, r), nil)
	}
	if err := s.CommitEpoch(b, 1, true); err != nil {
		t.Fatal(err)
	}
	return s, vn
}

// TestSnapshotScanReadsOneSnapshotThenTheLog: the snapshot scan reads A as it was
// when it started, whatever commits meanwhile and however often its iterators are
// rebuilt, across several of its own barriers; then a replay barrier applies the
// upstream's change log of the next epoch, in order, for its vnodes only.
func TestSnapshotScanReadsOneSnapshotThenTheLog(t *testing.T) {
	for _, rebuild := range []int64{0, 1, 7} {
		const n, vnodes = 300, 8
		s, vn := snapshotStore(t, n, vnodes)
		in := make(chan stream.Message, 64)
		parts := make(chan Part, 64)
		e, err := NewExecutor(Config{Vnodes: allVnodes(vnodes)[:4], Schema: &kv, VnodeCount: vnodes, ChunkSize: 16, Scan: Snapshot, Persist: true, EpochRows: 40, RebuildRows: rebuild},
			Env{Store: s, Input: in, Deliver: func(_ context.Context, p Part) error { parts <- p; return nil }})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- e.Run(context.Background()) }()

		var snapRows, net int64
		rebuilds := 0
		barrier := func(i uint64) Part {
			in <- stream.Message{Barrier: &stream.Barrier{Epoch: stream.Epoch{Prev: i - 1, Curr: i}, Injected: time.Now(), Creating: true}}
			select {
			case p := <-parts:
				snapRows += p.SnapshotRows
				net += p.NetRows
				rebuilds += p.Rebuilds
				if !p.Creating || p.Replayed != 0 {
					t.Fatalf("creating barrier %d: part %+v", i, p)
				}
				p.Close()
				return p
			case err := <-done:
				t.Fatalf("creating barrier %d: the actor stopped: %v", i, err)
			}
			return Part{}
		}
		last := barrier(1) // the scan has opened its snapshot

		// Epoch 2 of the upstream deletes every key and writes its change log:
		// the scan must not see the deletes, and the replay must apply them.
		b := s.DB.NewBatch()
		owned := 0
		var seq uint32
		for k := range n {
			r := row.Row{row.I64(int64(k)), row.Str("v1")}
			v := vn.Of(r)
			if v < 4 {
				owned++
			}
			b.Delete(storage.AppendRowKey(nil, storage.TableUpstream, v, &kv, r), nil)
			b.Set(storage.AppendLogKey(nil, 2, v, seq), stream.AppendLogValue(nil, stream.Delete, r), nil)
			seq++
		}
		if err := s.CommitEpoch(b, 2, true); err != nil {
			t.Fatal(err)
		}
		for i := uint64(2); !last.Finished; i++ {
			last = barrier(i)
			if i > 100 {
				t.Fatal("the scan never ended")
			}
		}
		if snapRows != int64(owned) || net != int64(owned) {
			t.Errorf("rebuild %d: %d snapshot rows, net %d; want the %d rows of the owned vnodes at epoch 1", rebuild, snapRows, net, owned)
		}
		if (rebuild > 0) != (rebuilds > 0) {
			t.Errorf("rebuild every %d rows: %d rebuilds", rebuild, rebuilds)
		}
		in <- stream.Message{Barrier: &stream.Barrier{Epoch: stream.Epoch{Prev: 100, Curr: 101}, Injected: time.Now(), Creating: true, Replay: 2, Final: false}}
		p := <-parts
		if p.Replayed != 2 || p.UpstreamRows != int64(owned) || p.NetRows != -int64(owned) || p.StateRows != 4 {
			t.Errorf("replay: %d rows, net %d, %d state rows; want %d, %d, 4", p.UpstreamRows, p.NetRows, p.StateRows, owned, -owned)
		}
		var deletes int
		for _, mv := range p.MV {
			r := mv.Reader()
			for {
				kind, _, _, ok, err := r.Next()
				if err != nil || !ok {
					break
				}
				if kind == pebble.InternalKeyKindDelete {
					deletes++
				}
			}
		}
		p.Close()
		if deletes != owned {
			t.Errorf("replay wrote %d deletes to B, want %d", deletes, owned)
		}
		// A replay out of order is refused.
		in <- stream.Message{Barrier: &stream.Barrier{Epoch: stream.Epoch{Prev: 101, Curr: 102}, Creating: true, Replay: 4}}
		if err := <-done; err == nil {
			t.Error("a replay of epoch 4 after epoch 2 was accepted")
		}
	}
}

// TestReplayWaitsForTheEpochsCommit: a replay barrier may come before its upstream
// epoch has committed (the engine's meta sends every pending upstream barrier);
// the actor waits for the commit (Env.WaitCommitted), then reads the epoch's log.
func TestReplayWaitsForTheEpochsCommit(t *testing.T) {
	const n, vnodes = 40, 4
	s, vn := snapshotStore(t, n, vnodes)
	in := make(chan stream.Message, 8)
	parts := make(chan Part, 8)
	committed := make(chan struct{})
	e, err := NewExecutor(Config{Vnodes: allVnodes(vnodes), Schema: &kv, VnodeCount: vnodes, ChunkSize: 16, Scan: Snapshot},
		Env{Store: s, Input: in, Deliver: func(_ context.Context, p Part) error { parts <- p; return nil },
			WaitCommitted: func(ctx context.Context, epoch uint64) error {
				if epoch != 2 {
					t.Errorf("waited for epoch %d, want 2", epoch)
				}
				select {
				case <-committed:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	for i := uint64(1); ; i++ { // the snapshot phase, until the scan has ended
		in <- stream.Message{Barrier: &stream.Barrier{Epoch: stream.Epoch{Prev: i - 1, Curr: i}, Creating: true}}
		p := <-parts
		p.Close()
		if p.Finished {
			break
		}
	}
	in <- stream.Message{Barrier: &stream.Barrier{Epoch: stream.Epoch{Prev: 10, Curr: 11}, Creating: true, Replay: 2}}
	select {
	case p := <-parts:
		t.Fatalf("replayed epoch 2 before it committed: %+v", p)
	case err := <-done:
		t.Fatalf("the actor stopped at a replay of an epoch not yet committed: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	r := row.Row{row.I64(int64(n)), row.Str("new")}
	b := s.DB.NewBatch()
	b.Set(storage.AppendLogKey(nil, 2, vn.Of(r), 0), stream.AppendLogValue(nil, stream.Insert, r), nil)
	if err := s.CommitEpoch(b, 2, true); err != nil {
		t.Fatal(err)
	}
	close(committed)
	select {
	case p := <-parts:
		if p.Replayed != 2 || p.UpstreamRows != 1 {
			t.Errorf("replay: epoch %d, %d rows; want epoch 2, 1 row", p.Replayed, p.UpstreamRows)
		}
		p.Close()
	case err := <-done:
		t.Fatalf("the actor stopped: %v", err)
	}
}
