package backfill

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/stream"
)

// TestLimiterKeepsDebtAcrossReopens: the executor's bucket is the same before and
// after its scan is reopened at a barrier; a scan that reset its budget per
// reopen (the model before) would let the rows after each barrier go at once.
func TestLimiterKeepsDebtAcrossReopens(t *testing.T) {
	st, err := storage.Open(storage.Options{FS: vfs.NewMem(), Dir: "/db"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e, err := NewExecutor(Config{Vnodes: allVnodes(4), Schema: &kv, VnodeCount: 4, ChunkSize: 8, RateLimit: 100}, Env{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer e.closeScan()
	now := time.Now()
	for range 20 { // 20 rows at 100 rows/s: 200 ms charged, 80 ms of them the burst
		e.limit.Take(now)
	}
	before := e.limit.Wait(now)
	if before < 100*time.Millisecond {
		t.Fatalf("Wait %v after 20 rows at 100 rows/s with a burst of 8, want ≥ 100ms", before)
	}
	for range 3 {
		if err := e.strat.(*mergedScan).openScan(st.Committed()); err != nil {
			t.Fatal(err)
		}
	}
	if after := e.limit.Wait(now); after != before {
		t.Errorf("the scan's reopening changed the wait from %v to %v: the bucket must keep its debt", before, after)
	}
}

// TestRateChangeAtBarrier: a scan paused from the start reads nothing (not even
// the one row per epoch a running scan is granted) until the barrier at which
// RateChange says the new limit is due; from there it reads.
func TestRateChangeAtBarrier(t *testing.T) {
	st, err := storage.Open(storage.Options{FS: vfs.NewMem(), Dir: "/db"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	vn := storage.NewVnoder(&kv, 4)
	b := st.DB.NewBatch()
	const rows = 500
	for k := range int64(rows) {
		rw := row.Row{row.I64(k), row.Str("v")}
		b.Set(storage.AppendRowKey(nil, storage.TableUpstream, vn.Of(rw), &kv, rw), row.AppendValue(nil, rw), nil)
	}
	if err := st.CommitEpoch(b, 1, true); err != nil {
		t.Fatal(err)
	}
	input := make(chan stream.Message)
	parts := make(chan Part, 8)
	exhausted := make(chan struct{})
	var due atomic.Bool
	e, err := NewExecutor(Config{Vnodes: allVnodes(4), Schema: &kv, VnodeCount: 4, ChunkSize: 16, RateLimit: Paused}, Env{
		Store: st, Input: input,
		Deliver:     func(_ context.Context, p Part) error { parts <- p; return nil },
		OnExhausted: func() { close(exhausted) },
		RateChange:  func() (float64, bool) { return 0, due.Load() },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	barrier := func(epoch uint64, final bool) Part {
		input <- stream.Message{Barrier: &stream.Barrier{Epoch: stream.Epoch{Prev: epoch - 1, Curr: epoch}, Injected: time.Now(), Final: final}}
		p := <-parts
		p.Close()
		return p
	}
	for epoch := uint64(2); epoch <= 4; epoch++ {
		if p := barrier(epoch, false); p.SnapshotRows != 0 {
			t.Fatalf("epoch %d: %d snapshot rows read while paused", epoch, p.SnapshotRows)
		}
	}
	due.Store(true)
	if p := barrier(5, false); p.SnapshotRows != 0 { // the change takes effect at this barrier
		t.Fatalf("epoch 5: %d snapshot rows read before the barrier that resumes the scan", p.SnapshotRows)
	}
	<-exhausted
	if p := barrier(6, true); p.SnapshotRows != rows || !p.Finished {
		t.Fatalf("epoch 6: %d snapshot rows (finished %v), want all %d after the resume", p.SnapshotRows, p.Finished, rows)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
