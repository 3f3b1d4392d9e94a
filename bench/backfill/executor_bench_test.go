package backfill

import (
	"context"
	"fmt"
	"hash/maphash"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/stream"
	"github.com/backfill-bench/backfill-bench/workloads"
)

// mvDigest is an order-free digest of MV rows: how many, and the sum of each
// key and value's hash.
type mvDigest struct {
	rows int64
	sum  uint64
}

func (d *mvDigest) add(seed maphash.Seed, key, value []byte) {
	var h maphash.Hash
	h.SetSeed(seed)
	h.Write(key)
	h.WriteByte(0)
	h.Write(value)
	d.rows++
	d.sum += h.Sum64()
}

// scanTable is table A of the narrow workload with 200 000 rows over 256 vnodes, in
// sstables, as a job's A after its load, and the digest of the MV rows an actor of
// the first 128 vnodes must write.
type scanTable struct {
	s      *storage.Store
	schema *row.Schema
	owned  []uint16
	seed   maphash.Seed
	want   mvDigest
}

func newScanTable(tb testing.TB) *scanTable {
	const rows, vnodes = 200_000, 256
	s := memStore(tb)
	wl, err := workloads.Parse("narrow", 1)
	if err != nil {
		tb.Fatal(err)
	}
	t := &scanTable{s: s, schema: wl.Schema(), owned: allVnodes(vnodes)[:vnodes/2], seed: maphash.MakeSeed()}
	vn := storage.NewVnoder(t.schema, vnodes)
	batch := s.DB.NewBatch()
	var r row.Row
	for id := range int64(rows) {
		r = wl.Row(r, 1, id, 0)
		v := vn.Of(r)
		value := row.AppendValue(nil, r)
		batch.Set(storage.AppendRowKey(nil, storage.TableUpstream, v, t.schema, r), value, nil)
		if int(v) < len(t.owned) {
			t.want.add(t.seed, storage.AppendRowKey(nil, storage.TableMV, v, t.schema, r), value)
		}
	}
	if err := s.CommitEpoch(batch, 1, true); err != nil {
		tb.Fatal(err)
	}
	if err := s.DB.Flush(); err != nil {
		tb.Fatal(err)
	}
	return t
}

// BenchmarkExecutorSnapshotScan measures one actor's own work in the snapshot
// scan, alone on its goroutine: reading its half of a scanTable from one snapshot
// and building the MV's and the state table's batches, epoch by epoch, as
// BenchmarkBackfill's actors do, without the collector, the storage's commits and
// compactions, and the other actor on the second core. An epoch is an actor's
// share of a 50krows or a 5krows epoch of two actors. exec-ns/row is the
// executor's cost per snapshot row that backfill ÷ replay depends on (README
// "Where the gap goes"). Every scan's MV rows are checked against A's rows of the
// actor's vnodes.
func BenchmarkExecutorSnapshotScan(b *testing.B) {
	t := newScanTable(b)
	for _, epochRows := range []int64{25_000, 2_500} {
		b.Run(fmt.Sprintf("epoch=%d", epochRows), func(b *testing.B) { t.scan(b, epochRows) })
	}
}

// scan runs b.N snapshot scans of t, epochRows rows an epoch.
func (t *scanTable) scan(b *testing.B, epochRows int64) {
	b.ReportAllocs()
	for range b.N {
		in := make(chan stream.Message, 1)
		parts := make(chan Part, 1)
		// A barrier comes once the actor has read its epoch's rows, or all of them, as
		// the work-driven cadence cuts one: sent at once, the actor would meet it a
		// few hundred rows in.
		read := make(chan bool, 1) // true: the scan has ended
		e, err := NewExecutor(Config{Vnodes: t.owned, Schema: t.schema, VnodeCount: 2 * len(t.owned), ChunkSize: 256,
			Scan: Snapshot, Persist: true, EpochRows: epochRows},
			Env{Store: t.s, Input: in, Deliver: func(_ context.Context, p Part) error { parts <- p; return nil },
				OnFull: func() { read <- false }, OnExhausted: func() { read <- true }})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel() // on a failure, stops the actor too
		done := make(chan error, 1)
		go func() { done <- e.Run(ctx) }()
		// Each part is checked and closed, as the collector would commit it, on the
		// benchmark's goroutine while the actor reads the next epoch.
		var got mvDigest
		ended := false
		for epoch := uint64(2); ; epoch++ {
			if !ended {
				select {
				case ended = <-read:
				case err := <-done:
					b.Fatalf("the actor stopped: %v", err)
				}
			}
			in <- stream.Message{Barrier: &stream.Barrier{Epoch: stream.Epoch{Prev: epoch - 1, Curr: epoch}, Injected: time.Now(), Creating: true}}
			var p Part
			select {
			case p = <-parts:
			case err := <-done:
				b.Fatalf("the actor stopped: %v", err)
			}
			for _, mv := range p.MV {
				for r := mv.Reader(); ; {
					kind, key, value, ok, err := r.Next()
					if err != nil {
						b.Fatalf("epoch %d: read back the MV batch: %v", epoch, err)
					}
					if !ok {
						break
					}
					if kind != pebble.InternalKeyKindSet {
						b.Fatalf("epoch %d: a snapshot row written as a %v", epoch, kind)
					}
					got.add(t.seed, key, value)
				}
			}
			finished := p.Finished
			p.Close()
			if finished {
				break
			}
		}
		cancel() // the actor would now wait for the upstream it joins
		<-done
		if got != t.want {
			b.Fatalf("the scan wrote %d MV rows (digest %x), want A's %d rows of the actor's vnodes (%x)", got.rows, got.sum, t.want.rows, t.want.sum)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*t.want.rows), "exec-ns/row")
}

// TestExecutorSnapshotScanBenchmarkRuns runs BenchmarkExecutorSnapshotScan's scan at
// 5krows, so that its check of the MV rows runs with the tests too.
func TestExecutorSnapshotScanBenchmarkRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a 200 000-row table")
	}
	tab := newScanTable(t)
	if r := testing.Benchmark(func(b *testing.B) { tab.scan(b, 2_500) }); r.N == 0 {
		t.Fatal("BenchmarkExecutorSnapshotScan failed: run it with go test -bench for its message")
	}
}
