package backfill

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/backfill-bench/backfill-bench/bench/storage"
)

// TestEpochWritesInKeyOrder: an epoch's snapshot rows, emitted in merged pk order
// across vnodes, then upstream writes in any order (some on keys the snapshot wrote,
// some repeated), come out in strictly ascending key order, one write per key, each
// key left as applying the writes one by one would leave it.
func TestEpochWritesInKeyOrder(t *testing.T) {
	db, _ := testDB(t, 0, 1)
	r := rand.New(rand.NewPCG(5, 6))
	type write struct {
		value string
		del   bool
	}
	for round := 0; round < 40; round++ {
		first, n := uint16(r.IntN(300)), 1+r.IntN(16)
		vnodes := make([]uint16, n)
		for i := range vnodes {
			vnodes[i] = first + uint16(i)
		}
		w := newEpochWrites(db, vnodes)
		model := map[string]write{}
		key := func(vi, pk int) []byte {
			return fmt.Appendf(storage.AppendPrefix(nil, storage.TableMV, vnodes[vi]), "%05d", pk)
		}
		// Snapshot rows: distinct pks, each in a random vnode, emitted in pk order.
		for pk := 0; pk < 400; pk++ {
			if r.IntN(2) == 0 {
				continue
			}
			vi := r.IntN(n)
			k := string(key(vi, pk))
			if err := w.snapshotSet(vi, []byte(k), []byte("s")); err != nil {
				t.Fatal(err)
			}
			model[k] = write{value: "s"}
		}
		for i := r.IntN(200); i > 0; i-- {
			k := key(r.IntN(n), r.IntN(400))
			if r.IntN(3) == 0 {
				w.upstream.Delete(k)
				model[string(k)] = write{del: true}
			} else {
				v := fmt.Sprint("u", i)
				w.upstream.Set(k, []byte(v))
				model[string(k)] = write{value: v}
			}
		}
		runs, n64, err := w.runs()
		if err != nil {
			t.Fatal(err)
		}
		var keys [][]byte
		var total int64
		for _, b := range runs {
			for rd := b.Reader(); ; {
				kind, k, v, ok, err := rd.Next()
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				if got, want := (write{string(v), kind == pebble.InternalKeyKindDelete}), model[string(k)]; got != want {
					t.Fatalf("round %d: key %q: %+v, want %+v", round, k, got, want)
				}
				if len(keys) > 0 && bytes.Compare(keys[len(keys)-1], k) >= 0 {
					t.Fatalf("round %d: key %q after %q", round, k, keys[len(keys)-1])
				}
				keys = append(keys, bytes.Clone(k))
				total += int64(len(k) + len(v))
			}
		}
		closeAll(runs)
		if len(keys) != len(model) {
			t.Fatalf("round %d: %d writes for %d keys", round, len(keys), len(model))
		}
		if n64 != total {
			t.Errorf("round %d: %d logical bytes, the batch holds %d", round, n64, total)
		}
		// w is empty for the next epoch.
		if runs, n, err := w.runs(); err != nil || n != 0 || len(runs) != 0 {
			t.Errorf("round %d: second runs: %d bytes, %d batches, %v", round, n, len(runs), err)
		}
		w.close()
	}
}

// BenchmarkEpochWrites measures handing over one actor's epoch in key order: 500k
// snapshot rows over 128 vnodes in merged pk order, then 7k upstream writes on keys
// behind the scan (about what one actor of the 1M-row job holds at its final barrier).
func BenchmarkEpochWrites(b *testing.B) {
	const rows, changes, vnodes = 500_000, 7_000, 128
	db, _ := testDB(b, 0, 1)
	w := newEpochWrites(db, allVnodes(vnodes))
	defer w.close()
	value := bytes.Repeat([]byte{'v'}, 24)
	r := rand.New(rand.NewPCG(7, 8))
	key := func(pk int) []byte {
		vnode := uint16(uint64(pk) * 0x9E3779B97F4A7C15 >> 57)
		return fmt.Appendf(storage.AppendPrefix(nil, storage.TableMV, vnode), "%08d", pk)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for pk := 0; pk < rows; pk++ {
			k := key(pk)
			if err := w.snapshotSet(int(storage.KeyVnode(k)), k, value); err != nil {
				b.Fatal(err)
			}
		}
		for c := 0; c < changes; c++ {
			w.upstream.Set(key(r.IntN(rows)), value)
		}
		b.StartTimer()
		runs, _, err := w.runs()
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		closeAll(runs)
	}
	b.ReportMetric(float64(b.N*(rows+changes))/b.Elapsed().Seconds(), "rows/s")
}
