package source

import (
	"context"
	"slices"
	"testing"

	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/stream"
)

func newSource(t *testing.T, seed uint64, mix Mix, initial int64) *Source {
	t.Helper()
	s, err := New(Config{Workload: testTable{}, Seed: seed, InitialRows: initial, ChangesPerEpoch: 100, Mix: mix, ChunkSize: 8, VnodeCount: 16, Par: 3})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestGenerateDeterministic(t *testing.T) {
	a, b := newSource(t, 7, DefaultMix, 50), newSource(t, 7, DefaultMix, 50)
	c := newSource(t, 8, DefaultMix, 50)
	differs := false
	for epoch := uint64(2); epoch < 200; epoch++ {
		ca := slices.Clone(a.Generate(epoch, 100))
		cb := b.Generate(epoch, 100)
		if !slices.Equal(ca, cb) {
			t.Fatalf("epoch %d: same seed, different changes", epoch)
		}
		if !slices.Equal(ca, c.Generate(epoch, 100)) {
			differs = true
		}
	}
	if !differs {
		t.Error("seeds 7 and 8 gave the same stream")
	}
}

func TestChangesTouchLiveKeys(t *testing.T) {
	for _, mix := range []Mix{DefaultMix, {Delete: 1}, {Update: 1, Delete: 1}} {
		s := newSource(t, 3, mix, 20)
		live := map[int64]uint32{}
		for id := int64(0); id < 20; id++ {
			live[id] = 1
		}
		for epoch := uint64(2); epoch < 100; epoch++ {
			for _, c := range s.Generate(epoch, 50) {
				switch c.Op {
				case stream.Insert:
					if _, ok := live[c.ID]; ok {
						t.Fatalf("insert of existing id %d", c.ID)
					}
					live[c.ID] = 1
				case stream.UpdateDelete:
					if live[c.ID] != c.OldVersion || c.OldVersion == 0 {
						t.Fatalf("update of id %d at version %d, live version %d", c.ID, c.OldVersion, live[c.ID])
					}
					live[c.ID]++
				case stream.Delete:
					if live[c.ID] != c.OldVersion || c.OldVersion == 0 {
						t.Fatalf("delete of id %d at version %d, live version %d", c.ID, c.OldVersion, live[c.ID])
					}
					delete(live, c.ID)
				}
			}
			if int64(len(live)) != s.Live() {
				t.Fatalf("epoch %d: %d live keys, source says %d", epoch, len(live), s.Live())
			}
		}
		if mix == (Mix{Delete: 1}) && s.Live() != 0 {
			t.Errorf("delete-only stream left %d keys", s.Live())
		}
	}
}

func TestPickDependsOnlyOnLiveSet(t *testing.T) {
	// Two sources reaching the same live set by different paths pick the same keys.
	a, b := newSource(t, 1, Mix{Delete: 1}, 10), newSource(t, 1, Mix{Delete: 1}, 10)
	for _, id := range []int64{2, 5} {
		a.versions[id], b.versions[9-id] = 0, 0
	}
	for _, id := range []int64{7, 4} {
		a.versions[id], b.versions[9-id] = 0, 0
	}
	a.live, b.live = 6, 6
	// a has 2,5,7,4 dead; b has 7,4,2,5 dead: the same set.
	if !slices.Equal(a.Generate(9, 3), b.Generate(9, 3)) {
		t.Error("same live set, different picks")
	}
}

// routeChanges routes 100 changes of s to three buffered actor channels; it
// returns the router, the channels, the writes to A and the changes.
func routeChanges(t *testing.T, s *Source) (*Router, []chan stream.Message, *storage.Writes, []Change) {
	t.Helper()
	chans := make([]chan stream.Message, 3)
	outs := make([]chan<- stream.Message, 3)
	for i := range chans {
		chans[i] = make(chan stream.Message, 1000)
		outs[i] = chans[i]
	}
	rt := s.NewRouter(outs)
	w := &storage.Writes{}
	changes := s.Generate(2, 100)
	if err := rt.Apply(context.Background(), w, changes); err != nil {
		t.Fatal(err)
	}
	return rt, chans, w, changes
}

func TestRouterSendsToOwnersWithBarrierLast(t *testing.T) {
	s := newSource(t, 5, DefaultMix, 0)
	rt, chans, w, changes := routeChanges(t, s)
	if w.Len() != len(changes) {
		t.Errorf("%d writes to A for %d changes", w.Len(), len(changes))
	}
	if err := rt.Barrier(context.Background(), &stream.Barrier{Epoch: stream.Epoch{Prev: 1, Curr: 2}}); err != nil {
		t.Fatal(err)
	}
	rows := 0
	for a, ch := range chans {
		close(ch)
		var last stream.Message
		for m := range ch {
			if last.Barrier != nil {
				t.Fatalf("actor %d: message after the barrier", a)
			}
			if m.Chunk != nil {
				if m.Chunk.Len() > 8 {
					t.Errorf("chunk of %d rows, chunk size 8", m.Chunk.Len())
				}
				for i, r := range m.Chunk.Rows {
					if owner := s.owner[s.vnoder.Of(r)]; owner != a {
						t.Errorf("row %v routed to actor %d, owner %d", r, a, owner)
					}
					if m.Chunk.Ops[i] == stream.UpdateDelete && (i+1 >= m.Chunk.Len() || m.Chunk.Ops[i+1] != stream.UpdateInsert) {
						t.Errorf("update pair split across chunks")
					}
				}
				rows += m.Chunk.Len()
			}
			last = m
		}
		if last.Barrier == nil {
			t.Errorf("actor %d: no barrier at the end", a)
		}
	}
	if rows < 100 {
		t.Errorf("routed %d rows for 100 changes", rows)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	good := Config{Workload: testTable{}, ChunkSize: 1, VnodeCount: 4, Par: 2, Mix: DefaultMix}
	for name, edit := range map[string]func(*Config){
		"no workload": func(c *Config) { c.Workload = nil },
		"empty mix":   func(c *Config) { c.Mix = Mix{} },
		"negative":    func(c *Config) { c.Mix = Mix{Insert: -1, Update: 2} },
		"par>vnodes":  func(c *Config) { c.Par = 5 },
		"chunk size":  func(c *Config) { c.ChunkSize = 0 },
	} {
		c := good
		edit(&c)
		if _, err := New(c); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := New(good); err != nil {
		t.Error(err)
	}
}

// TestRouterMovesRows: an update that changes the primary key deletes the old key
// and sets the new one in A; each half goes to the actor owning its row, as an
// update pair when that is one actor and as a Delete and an Insert otherwise.
func TestRouterMovesRows(t *testing.T) {
	s := newSource(t, 5, Mix{PKUpdate: 1}, 50)
	rt, chans, w, changes := routeChanges(t, s)
	if w.Len() != 2*len(changes) || s.Live() != 50 {
		t.Errorf("%d writes for %d moves, %d live keys; want 2 per move and 50", w.Len(), len(changes), s.Live())
	}
	if err := rt.Barrier(context.Background(), &stream.Barrier{Epoch: stream.Epoch{Prev: 1, Curr: 2}}); err != nil {
		t.Fatal(err)
	}
	pairs, lone := 0, 0
	for a, ch := range chans {
		close(ch)
		for m := range ch {
			if m.Chunk == nil {
				continue
			}
			for i, r := range m.Chunk.Rows {
				if owner := s.owner[s.vnoder.Of(r)]; owner != a {
					t.Errorf("row %v routed to actor %d, owner %d", r, a, owner)
				}
				switch m.Chunk.Ops[i] {
				case stream.UpdateDelete:
					if i+1 >= m.Chunk.Len() || m.Chunk.Ops[i+1] != stream.UpdateInsert {
						t.Errorf("an update pair split across chunks")
					}
					pairs++
				case stream.Delete, stream.Insert:
					lone++
				}
			}
		}
	}
	if pairs == 0 || lone == 0 || pairs+lone/2 != len(changes) {
		t.Errorf("%d pairs and %d lone halves for %d moves: want both kinds, one of them per move", pairs, lone, len(changes))
	}
	if split, whole := rt.Moves(); split != lone/2 || whole != pairs {
		t.Errorf("the router counted %d split and %d whole moves, want the %d and %d routed", split, whole, lone/2, pairs)
	}
	if split, whole := rt.Moves(); split != 0 || whole != 0 {
		t.Errorf("Moves after Moves = %d, %d; want the counts reset", split, whole)
	}
}

// TestBoundaryChangesAimAtPositions: the boundary changes of an epoch update the
// rows at, just below and just above the positions the scans report, the heads
// first; they leave the keys' versions as they were (a replay cannot know the
// positions), are a function of (seed, epoch, positions), and none come without
// positions or a boundary share.
func TestBoundaryChangesAimAtPositions(t *testing.T) {
	heads := [][]row.Datum{{row.I64(40)}, {row.I64(90)}}
	others := [][]row.Datum{{row.I64(10)}, {row.I64(20)}}
	positions := func(dst [][]row.Datum) ([][]row.Datum, int) {
		return append(append(dst[:0], heads...), others...), len(heads)
	}
	mk := func(share float64, pos func([][]row.Datum) ([][]row.Datum, int)) *Source {
		mix := DefaultMix
		mix.Boundary = share
		s, err := New(Config{Workload: testTable{}, Seed: 3, InitialRows: 100, ChangesPerEpoch: 40, Mix: mix, ChunkSize: 8, VnodeCount: 16, Par: 2, Positions: pos})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s, again := mk(0.5, positions), mk(0.5, positions)
	near := map[int64]bool{}
	for _, p := range slices.Concat(heads, others) {
		for d := int64(-1); d <= 1; d++ {
			near[p[0].I+d] = true
		}
	}
	atHeads, total := 0, 0
	for epoch := uint64(2); epoch < 50; epoch++ {
		versions := slices.Clone(s.versions)
		bc := slices.Clone(s.Boundary(epoch, 40))
		if !slices.Equal(bc, again.Boundary(epoch, 40)) {
			t.Fatalf("epoch %d: same seed and positions, different boundary changes", epoch)
		}
		if len(bc) == 0 || len(bc) > 20 {
			t.Fatalf("epoch %d: %d boundary changes for 40 changes at a share of 0.5", epoch, len(bc))
		}
		total += len(bc)
		for _, c := range bc {
			if c.Op != stream.UpdateDelete || !near[c.ID] || c.OldVersion != versions[c.ID] || c.NewVersion == 0 || c.NewVersion == c.OldVersion+1 {
				t.Errorf("epoch %d: change %+v: want an update near a position, to a version of its own", epoch, c)
			}
			if c.ID >= 39 && c.ID <= 41 || c.ID >= 89 && c.ID <= 91 {
				atHeads++
			}
		}
		if !slices.Equal(versions, s.versions) {
			t.Fatalf("epoch %d: boundary changes moved the key versions", epoch)
		}
	}
	if atHeads*3 < total { // half aim at a head, and some of the others draw one too
		t.Errorf("%d of %d boundary changes at the heads, want over half", atHeads, total)
	}
	if bc := mk(0, positions).Boundary(2, 40); len(bc) != 0 {
		t.Errorf("a zero share gave %d boundary changes", len(bc))
	}
	if bc := mk(0.5, nil).Boundary(2, 40); len(bc) != 0 {
		t.Errorf("no positions gave %d boundary changes", len(bc))
	}
}
