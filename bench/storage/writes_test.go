package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// entry is one write of a batch; del marks a Delete.
type entry struct {
	key, value string
	del        bool
}

func batchEntries(t *testing.T, b *pebble.Batch) []entry {
	t.Helper()
	var out []entry
	for r := b.Reader(); ; {
		kind, k, v, ok, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, entry{string(k), string(v), kind == pebble.InternalKeyKindDelete})
	}
}

func openTestDB(t *testing.T) *pebble.DB {
	s, err := Open(Options{FS: vfs.NewMem(), Dir: "/db"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.DB
}

func TestWritesAppendTo(t *testing.T) {
	set := func(k, v string) entry { return entry{key: k, value: v} }
	del := func(k string) entry { return entry{key: k, del: true} }
	tests := []struct {
		name      string
		in, want  []entry
		wantBytes int64
	}{
		{"empty", nil, nil, 0},
		{"sorted stays", []entry{set("a", "1"), set("b", "2")}, []entry{set("a", "1"), set("b", "2")}, 4},
		{"reordered", []entry{set("c", "3"), del("a"), set("b", "2")}, []entry{del("a"), set("b", "2"), set("c", "3")}, 5},
		{"last write of a key wins: delete then insert", []entry{del("k"), set("k", "new")}, []entry{set("k", "new")}, 4},
		{"last write of a key wins: insert then delete", []entry{set("k", "v"), set("j", "x"), del("k")}, []entry{set("j", "x"), del("k")}, 3},
		{"prefix keys order", []entry{set("ab", ""), set("a", ""), set("a\x00", "")}, []entry{set("a", ""), set("a\x00", ""), set("ab", "")}, 5},
	}
	db := openTestDB(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w Writes
			for _, e := range tt.in {
				if e.del {
					w.Delete([]byte(e.key))
				} else {
					w.Set([]byte(e.key), []byte(e.value))
				}
			}
			b := db.NewBatch()
			defer b.Close()
			w.Sort()
			n, err := w.PutAll(b)
			if err != nil {
				t.Fatal(err)
			}
			if got := batchEntries(t, b); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("batch %v, want %v", got, tt.want)
			}
			if n != tt.wantBytes {
				t.Errorf("%d logical bytes, want %d", n, tt.wantBytes)
			}
		})
	}
}

// TestWritesMatchesArrivalOrder: for random writes with many repeated keys, sorted
// writes (whole, or as two halves sorted apart and appended, as scans overlay the
// sealed epochs) are in strictly ascending key order and leave every key as applying
// the writes one by one, in arrival order, would; Search finds the first key ≥ any.
func TestWritesMatchesArrivalOrder(t *testing.T) {
	db := openTestDB(t)
	r := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 50; round++ {
		var w, older, newer Writes
		model := map[string]entry{}
		n := r.IntN(300)
		for i := n; i > 0; i-- {
			k := fmt.Sprintf("k%03d", r.IntN(100))
			e := entry{key: k, value: fmt.Sprint(i), del: r.IntN(3) == 0}
			half := &older
			if i <= n/2 {
				half = &newer
			}
			if e.del {
				e.value = ""
				w.Delete([]byte(k))
				half.Delete([]byte(k))
			} else {
				w.Set([]byte(k), []byte(e.value))
				half.Set([]byte(k), []byte(e.value))
			}
			model[k] = e
		}
		older.Sort()
		newer.Sort()
		var halves Writes
		halves.Append(&older, 0, older.Len())
		halves.Append(&newer, 0, newer.Len())
		halves.Sort()
		w.Sort()
		if fmt.Sprint(writesOf(&halves)) != fmt.Sprint(writesOf(&w)) {
			t.Fatalf("round %d: halves appended and sorted %v, want %v", round, writesOf(&halves), writesOf(&w))
		}
		probe := []byte(fmt.Sprintf("k%03d", r.IntN(101)))
		want := 0
		for want < w.Len() && bytes.Compare(w.Key(want), probe) < 0 {
			want++
		}
		if got := w.Search(probe); got != want {
			t.Fatalf("round %d: Search(%s) = %d, want %d", round, probe, got, want)
		}
		b := db.NewBatch()
		if _, err := w.PutAll(b); err != nil {
			t.Fatal(err)
		}
		got := batchEntries(t, b)
		b.Close()
		if len(got) != len(model) {
			t.Fatalf("round %d: %d entries for %d keys", round, len(got), len(model))
		}
		for i, e := range got {
			if i > 0 && bytes.Compare([]byte(got[i-1].key), []byte(e.key)) >= 0 {
				t.Fatalf("round %d: %q after %q", round, e.key, got[i-1].key)
			}
			if model[e.key] != e {
				t.Fatalf("round %d: %+v, want %+v", round, e, model[e.key])
			}
		}
	}
}

// BenchmarkCommitEpoch measures committing one large epoch batch (over half the
// memtable, so Pebble takes it as a flushable batch and sorts it) by the order its
// writes are in: "sorted" as Writes and the actors hand them over, "merged-scan" as a
// merged scan emits snapshot rows (pk order, vnodes interleaved), and "updates", key
// order with every 50th key written twice in arrival order (an update's delete and
// insert), which Pebble's newest-first order for equal keys sees as out of place.
func BenchmarkCommitEpoch(b *testing.B) {
	const rows = 500_000
	type kv struct{ key, value []byte }
	scan := make([]kv, 0, rows)
	for pk := uint64(0); pk < rows; pk++ {
		vnode := uint16(pk * 0x9E3779B97F4A7C15 >> 56)
		key := binary.BigEndian.AppendUint64(AppendPrefix(nil, TableMV, vnode), pk)
		scan = append(scan, kv{key, bytes.Repeat([]byte{'v'}, 64)})
	}
	sorted := slices.Clone(scan)
	slices.SortFunc(sorted, func(a, b kv) int { return bytes.Compare(a.key, b.key) })
	var updates []kv
	for i, e := range sorted {
		if i%50 == 0 {
			updates = append(updates, kv{e.key, nil})
		}
		updates = append(updates, e)
	}
	for _, order := range []struct {
		name   string
		writes []kv
	}{{"sorted", sorted}, {"merged-scan", scan}, {"updates", updates}} {
		b.Run("order="+order.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				s, err := Open(Options{FS: vfs.NewMem(), Dir: "/db"})
				if err != nil {
					b.Fatal(err)
				}
				batch := s.DB.NewBatch()
				for _, e := range order.writes {
					if e.value == nil {
						batch.Delete(e.key, nil)
					} else {
						batch.Set(e.key, e.value, nil)
					}
				}
				b.StartTimer()
				if err := s.CommitEpoch(batch, 1, true); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				s.Close()
			}
		})
	}
}

func writesOf(w *Writes) []entry {
	var out []entry
	for i := range w.Len() {
		k, v, del := w.Write(i)
		out = append(out, entry{string(k), string(v), del})
	}
	return out
}
