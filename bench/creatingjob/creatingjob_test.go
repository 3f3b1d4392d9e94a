package creatingjob

import (
	"context"
	"slices"
	"testing"
	"time"

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

// TestLogPhaseSendsEverySealedEpoch: once the snapshot is read, the creating job
// gets a replay barrier for every upstream epoch sealed since, at once, as the
// engine's meta injects its pending upstream barriers: time-driven, committed or
// not (an actor waits for its epoch's commit: WaitCommitted), and an epoch sealed
// while they are out is sent at once too; work-driven, in batches, each once
// every epoch cut has committed, the upstream cutting no epoch until the batch has
// committed.
func TestLogPhaseSendsEverySealedEpoch(t *testing.T) {
	all := []uint64{11, 12, 13, 14, 15, 16}
	for _, gated := range []bool{false, true} {
		cj := New(1, 10, gated, 1)
		wakes := 0
		cj.SetWakeGate(func() { wakes++ })
		cj.UpstreamCommitted(14)
		seal(cj, 16)                     // a tap passed 15 and 16, not committed yet
		cj.CreatingCommitted(1, true, 0) // the snapshot is read: the log phase begins
		want := all
		if gated {
			want = nil
		}
		if got := replays(cj); !slices.Equal(got, want) {
			t.Fatalf("gated %v: replay barriers %v at the log phase's start, want %v", gated, got, want)
		}
		waited := make(chan error)
		go func() { waited <- cj.WaitCommitted(context.Background(), 16) }()
		cj.UpstreamCommitted(15)
		select {
		case <-waited:
			t.Fatalf("gated %v: WaitCommitted(16) returned with 15 committed", gated)
		case <-time.After(10 * time.Millisecond):
		}
		cj.UpstreamCommitted(16)
		if err := <-waited; err != nil {
			t.Fatal(err)
		}
		want = nil
		if gated {
			want = all
		}
		if got := replays(cj); !slices.Equal(got, want) {
			t.Fatalf("gated %v: replay barriers %v once 16 committed, want %v", gated, got, want)
		}
		if gated {
			if ready, _ := cj.AfterScans(); ready {
				t.Fatal("work-driven: the upstream cut an epoch while a batch of replays was out")
			}
		} else {
			seal(cj, 17)
			if got, want := replays(cj), []uint64{17}; !slices.Equal(got, want) {
				t.Fatalf("time-driven: replay barriers %v after epoch 17 was sealed with replays out, want %v", got, want)
			}
		}
		for i, u := range all {
			cj.CreatingCommitted(uint64(2+i), false, u)
		}
		if got := cj.DataEpoch(); got != 16 {
			t.Errorf("gated %v: the MV holds epoch %d, want 16", gated, got)
		}
		if gated {
			if wakes != 1 {
				t.Errorf("work-driven: %d gate wakes after the batch committed, want 1 (at its end)", wakes)
			}
			if ready, _ := cj.AfterScans(); !ready {
				t.Error("work-driven: the upstream may not cut once the batch has committed")
			}
		}
	}
}

// seal marks upstream epoch e passed by a tap, as a tap does.
func seal(cj *Job, e uint64) {
	cj.mu.Lock()
	defer cj.mu.Unlock()
	cj.sealed = max(cj.sealed, e)
	cj.dispatch()
}

// replays takes the replay barriers waiting in actor 0's mailbox.
func replays(cj *Job) []uint64 {
	box := cj.boxes[0]
	box.mu.Lock()
	defer box.mu.Unlock()
	var got []uint64
	for _, m := range box.items {
		if m.Barrier != nil && m.Barrier.Replay > 0 {
			got = append(got, m.Barrier.Replay)
		}
	}
	box.items = nil
	return got
}
