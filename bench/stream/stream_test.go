package stream

import (
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/row"
)

func TestBitmap(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 1024} {
		b := NewBitmap(n, true)
		if b.Count() != n {
			t.Errorf("n=%d: all-set bitmap counts %d", n, b.Count())
		}
		if n > 0 {
			b.Set(n-1, false)
			if b.Get(n-1) || b.Count() != n-1 {
				t.Errorf("n=%d: clearing the last bit failed", n)
			}
			b.Set(n-1, true)
			if !b.Get(n - 1) {
				t.Errorf("n=%d: setting the last bit failed", n)
			}
		}
		if NewBitmap(n, false).Count() != 0 {
			t.Errorf("n=%d: empty bitmap not empty", n)
		}
	}
}

func TestChunkVisibility(t *testing.T) {
	c := NewChunk(4)
	c.Append(Insert, row.Row{row.I64(1)})
	c.Append(Delete, row.Row{row.I64(2)})
	if c.Cardinality() != 2 || !c.Visible(1) {
		t.Error("rows are visible until a bitmap is set")
	}
	c.Vis = NewBitmap(2, true)
	c.Vis.Set(0, false)
	if c.Cardinality() != 1 || c.Visible(0) {
		t.Error("bitmap not applied")
	}
}

func TestInjectorCheckpoints(t *testing.T) {
	in := &Injector{Interval: time.Second, CheckpointFrequency: 3}
	t0 := time.Unix(100, 0)
	in.Start(t0)
	if !in.Due().Equal(t0.Add(time.Second)) {
		t.Errorf("first barrier due %v", in.Due())
	}
	var got []bool
	for e := uint64(2); e <= 7; e++ {
		b := in.Inject(e, t0, false)
		if b.Epoch.Curr != e || b.Epoch.Prev != e-1 {
			t.Errorf("epoch pair %+v", b.Epoch)
		}
		got = append(got, b.Checkpoint)
	}
	want := []bool{false, true, false, false, true, false}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("checkpoints %v, want %v", got, want)
		}
	}
	if b := in.Inject(8, t0, true); !b.Checkpoint || !b.Final {
		t.Error("the final barrier must be a checkpoint")
	}
	every := &Injector{Interval: time.Second}
	if !every.Inject(5, t0, false).Checkpoint {
		t.Error("frequency 0 means every barrier checkpoints")
	}
}
