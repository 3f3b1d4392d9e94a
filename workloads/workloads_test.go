package workloads

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/source"
	"github.com/backfill-bench/backfill-bench/bench/stream"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestGolden pins the first rows of every table for seed 1: a change in the
// generator or in gofakeit's output shows here, and results stop being comparable.
func TestGolden(t *testing.T) {
	for _, name := range tableNames() {
		t.Run(name, func(t *testing.T) {
			w, err := Parse(name, 1)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			var r row.Row
			for id := int64(0); id < 3; id++ {
				for _, v := range []uint32{1, 2} {
					r = w.Row(r, 1, id, v)
					fmt.Fprintf(&buf, "id=%d v=%d %v\n", id, v, r)
				}
			}
			path := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./workloads -update to create it)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				got := path + ".got-stdout"
				os.WriteFile(got, buf.Bytes(), 0o644)
				t.Errorf("rows differ from %s; see %s", path, got)
			}
		})
	}
}

func TestRowsDeterministicAndSeeded(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			a, err := Parse(name, 7)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := Parse(name, 7)
			c, _ := Parse(name, 8)
			s := a.Schema()
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			differ := 0
			pks := map[string]bool{}
			for id := int64(0); id < 500; id++ {
				ra := slices.Clone(a.Row(nil, 7, id, 3))
				if !slices.Equal(ra, b.Row(nil, 7, id, 3)) {
					t.Fatalf("id %d: same seed, different rows", id)
				}
				if !slices.Equal(ra, c.Row(nil, 8, id, 3)) {
					differ++
				}
				if len(ra) != len(s.Columns) {
					t.Fatalf("row has %d datums, schema %d columns", len(ra), len(s.Columns))
				}
				for i, d := range ra {
					if d.Kind != s.Columns[i].Kind {
						t.Fatalf("column %s: %v, want kind %v", s.Columns[i].Name, d, s.Columns[i].Kind)
					}
				}
				// The pk depends on the id alone, and ids map to distinct pks.
				pk := fmt.Sprint(s.PKOf(nil, ra))
				if fmt.Sprint(s.PKOf(nil, a.Row(nil, 7, id, 9))) != pk {
					t.Fatalf("id %d: pk changes with the version", id)
				}
				if pks[pk] {
					t.Fatalf("id %d: pk %s already used", id, pk)
				}
				pks[pk] = true
			}
			if differ < 450 {
				t.Errorf("seeds 7 and 8 agree on %d of 500 rows", 500-differ)
			}
		})
	}
}

func TestWideRowsAreAboutOneKiB(t *testing.T) {
	w, _ := Parse("wide", 1)
	total := 0
	for id := int64(0); id < 200; id++ {
		total += len(row.AppendValue(nil, w.Row(nil, 1, id, 1)))
	}
	if avg := total / 200; avg < 800 || avg > 1300 {
		t.Errorf("wide rows average %d bytes, want about 1 KiB", avg)
	}
}

func pickHistogram(t *testing.T, spec string, n int64, draws int) []int {
	t.Helper()
	w, err := Parse(spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	h := make([]int, n)
	for i := 0; i < draws; i++ {
		id := w.Pick(r, n)
		if id < 0 || id >= n {
			t.Fatalf("%s picked %d outside [0,%d)", spec, id, n)
		}
		h[id]++
	}
	return h
}

func TestKeyDistributions(t *testing.T) {
	const n, draws = 1000, 100_000
	t.Run("uniform spread", func(t *testing.T) {
		h := pickHistogram(t, "narrow+uniform", n, draws)
		for i := 0; i < n; i += 100 {
			decile := 0
			for _, c := range h[i : i+100] {
				decile += c
			}
			if decile < 9000 || decile > 11000 { // expect 10 000
				t.Errorf("ids [%d,%d) got %d of %d draws", i, i+100, decile, draws)
			}
		}
	})
	t.Run("zipfian head share", func(t *testing.T) {
		h := pickHistogram(t, "narrow+zipfian", n, draws)
		head := 0
		for _, c := range h[:10] {
			head += c
		}
		// Zipf(1.1) over 1000 keys puts roughly 60% of draws on the first 10.
		if share := float64(head) / draws; share < 0.45 || share > 0.8 {
			t.Errorf("top 1%% of keys got %.0f%% of draws", share*100)
		}
		steeper := pickHistogram(t, "narrow+zipfian:2", n, draws)
		if steeper[0] <= h[0] {
			t.Errorf("zipfian:2 hottest key %d draws, not above zipfian:1.1's %d", steeper[0], h[0])
		}
	})
	t.Run("hot range", func(t *testing.T) {
		h := pickHistogram(t, "narrow+hot-range", n, draws)
		hot := 0
		for _, c := range h[450:550] {
			hot += c
		}
		if share := float64(hot) / draws; share < 0.88 || share > 0.94 { // 0.9 + 0.1·0.1
			t.Errorf("hot 10%% range got %.1f%% of draws, want ~91%%", share*100)
		}
	})
}

func TestParseSpec(t *testing.T) {
	for in, want := range map[string]string{
		"bid":                              "bid",
		"narrow+zipfian":                   "narrow+zipfian",
		"narrow+tombstone+uniform":         "narrow+uniform+tombstone",
		"person+sequential+default":        "person",
		"auction+zipfian:1.3+delete-heavy": "auction+zipfian:1.3+delete-heavy",
	} {
		sp, err := ParseSpec(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if sp.String() != want {
			t.Errorf("ParseSpec(%q).String() = %q, want %q", in, sp.String(), want)
		}
	}
	for _, bad := range []string{"", "nope", "bid+nope", "bid+uniform+zipfian", "bid+tombstone+insert-only", "bid+zipfian:0.5", "bid+zipfian:x", "bid+uniform:2"} {
		if _, err := ParseSpec(bad); err == nil {
			t.Errorf("ParseSpec(%q): no error", bad)
		}
	}
}

// TestTombstoneBursts checks that the tombstone mix deletes runs of consecutive keys
// in the upper half of the id space every 5th epoch.
func TestTombstoneBursts(t *testing.T) {
	w, _ := Parse("narrow+tombstone", 1)
	mix, burst := w.Mix()
	src, err := source.New(source.Config{Workload: w, Seed: 1, InitialRows: 10_000, ChangesPerEpoch: 10, Mix: mix, Keys: w, Burst: burst, ChunkSize: 8, VnodeCount: 4, Par: 1})
	if err != nil {
		t.Fatal(err)
	}
	for epoch := uint64(1); epoch <= 10; epoch++ {
		deletes := 0
		for _, c := range src.Generate(epoch, 10) {
			if c.Op == stream.Delete {
				deletes++
			}
		}
		if epoch%5 == 0 && deletes < 150 {
			t.Errorf("epoch %d: %d deletes, want a burst of ~200", epoch, deletes)
		}
		if epoch%5 != 0 && deletes > 10 {
			t.Errorf("epoch %d: %d deletes outside a burst", epoch, deletes)
		}
	}
}

// BenchmarkGenerate measures row generation per workload: rows/s and value bytes per
// row. Generation must stay far above a backfill's row rate.
func BenchmarkGenerate(b *testing.B) {
	for _, name := range tableNames() {
		b.Run(name, func(b *testing.B) {
			w, err := Parse(name, 1)
			if err != nil {
				b.Fatal(err)
			}
			var r row.Row
			var buf []byte
			bytes := 0
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				r = w.Row(r, 1, int64(i), 1)
				buf = row.AppendValue(buf[:0], r)
				bytes += len(buf)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(bytes)/float64(b.N), "B/row")
		})
	}
}

// TestKeyIndex: every workload maps a row's primary key back to its id (the
// boundary changes aim at a scan position through it), and, where keys keep
// insertion order, id ± Stride holds the keys just around it: nothing generated lies
// between.
func TestKeyIndex(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			w, err := Parse(name, 7)
			if err != nil {
				t.Fatal(err)
			}
			s := w.Schema()
			const n = 3000
			rows := make([]row.Row, n)
			for id := range int64(n) {
				rows[id] = w.Row(nil, 7, id, 2)
				got, ok := w.IDOf(s.PKOf(nil, rows[id]))
				if !ok || got != id {
					t.Fatalf("IDOf(row of id %d) = %d, %v", id, got, ok)
				}
			}
			stride := w.Stride()
			if stride == 0 {
				return
			}
			for id := int64(0); id+stride < n; id += 7 {
				lo, hi := rows[id], rows[id+stride]
				if s.ComparePK(lo, hi) >= 0 {
					t.Fatalf("id %d pk %v is not below id %d pk %v", id, lo, id+stride, hi)
				}
				for _, r := range rows {
					if s.ComparePK(lo, r) < 0 && s.ComparePK(r, hi) < 0 {
						t.Fatalf("pk %v lies between ids %d and %d (%v, %v)", r, id, id+stride, lo, hi)
					}
				}
			}
		})
	}
}

// TestCompositeKeyTable: at least one table has the key of a grouped MV: two or
// more primary key columns of mixed kinds, one descending, and a distribution key
// that is a strict prefix of the primary key.
func TestCompositeKeyTable(t *testing.T) {
	s := findTable("groups").schema
	kinds := map[row.Kind]bool{}
	for _, c := range s.PK {
		kinds[s.Columns[c].Kind] = true
	}
	if len(s.PK) < 2 || len(kinds) < 3 || !slices.Contains(s.PKDesc, true) {
		t.Errorf("pk %v (desc %v): want 2-3 columns of int, string and timestamp, one descending", s.PK, s.PKDesc)
	}
	if len(s.DistKey) >= len(s.PK) || !slices.Equal(s.DistKey, s.PK[:len(s.DistKey)]) {
		t.Errorf("distribution key %v is not a strict prefix of pk %v", s.DistKey, s.PK)
	}
}
