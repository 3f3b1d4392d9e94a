package creatingjob

import (
	"slices"
	"testing"

	"github.com/backfill-bench/backfill-bench/bench/backfill"
	"github.com/backfill-bench/backfill-bench/bench/stream"
)

// TestCollectCommitsInOrder: a creating epoch commits once all par actors' parts
// are in, and only after every epoch before it.
func TestCollectCommitsInOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		par  int
		seqs []uint64 // the parts' creating epochs, in arrival order
		want []uint64 // the epochs committed, in order
	}{
		{"in order", 1, []uint64{1, 2, 3}, []uint64{1, 2, 3}},
		{"waits for every actor", 2, []uint64{1, 2, 1}, []uint64{1}},
		{"waits for the epoch before", 2, []uint64{2, 2, 1, 3, 1}, []uint64{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cj := New(tc.par, 5, true, 1)
			var got []uint64
			for i, seq := range tc.seqs {
				p := backfill.Part{Actor: i % tc.par, Barrier: &stream.Barrier{Epoch: stream.Epoch{Prev: seq - 1, Curr: seq}}}
				err := cj.Collect(p, func(seq uint64, parts []backfill.Part) error {
					if len(parts) != tc.par {
						t.Errorf("epoch %d committed with %d parts, want %d", seq, len(parts), tc.par)
					}
					got = append(got, seq)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("committed %v, want %v", got, tc.want)
			}
		})
	}
}

// TestJoinWithoutLag: work-driven, once the scans end the gate cuts one epoch;
// a snapshot read with no upstream epoch since joins at once, and the gate then
// cuts the final epoch, once, the first the actors get coupled.
func TestJoinWithoutLag(t *testing.T) {
	cj := New(1, 10, true, 1)
	wakes := 0
	cj.SetWakeGate(func() { wakes++ })
	for i, want := range [][2]bool{{true, false}, {false, false}} {
		if ready, final := cj.AfterScans(); ready != want[0] || final != want[1] {
			t.Fatalf("snapshot phase, call %d: ready %v final %v, want %v", i, ready, final, want)
		}
	}
	if lag := cj.CreatingCommitted(1, true, 0); lag != 0 {
		t.Errorf("lag %d, want 0", lag)
	}
	select {
	case <-cj.Finish():
	default:
		t.Fatal("not joined after the snapshot was read with no lag")
	}
	if wakes != 1 || cj.Coupled(10) || !cj.Coupled(11) {
		t.Errorf("joined: %d gate wakes, coupled(10) %v, coupled(11) %v; want 1, false, true", wakes, cj.Coupled(10), cj.Coupled(11))
	}
	for i, want := range [][2]bool{{true, true}, {false, true}} {
		if ready, final := cj.AfterScans(); ready != want[0] || final != want[1] {
			t.Fatalf("joined, call %d: ready %v final %v, want %v", i, ready, final, want)
		}
	}
}
