package ratestep

import (
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/backfill"
)

// TestRateStepDue: a step at a row count is due once the actors together have
// emitted that many rows, not before; one in time, once the time has passed.
func TestRateStepDue(t *testing.T) {
	s := New(Step{AtRows: 100, Rate: 5000})
	s.Start()
	defer s.Stop()
	for _, n := range []int{40, 40, 19} {
		s.OnEmit(n)
		if _, due := s.Change(); due {
			t.Fatalf("due after %d of 100 rows", s.emitted.Load())
		}
	}
	s.OnEmit(1)
	if rate, due := s.Change(); !due || rate != 5000 {
		t.Fatalf("at 100 rows: rate %v, due %v; want 5000, due", rate, due)
	}
	timed := New(Step{After: 20 * time.Millisecond, Rate: backfill.Paused})
	timed.OnEmit(1 << 30) // rows do not matter to a step in time
	if _, due := timed.Change(); due {
		t.Fatal("a step in time was due before it started")
	}
	timed.Start()
	defer timed.Stop()
	deadline := time.Now().Add(10 * time.Second)
	for _, due := timed.Change(); !due; _, due = timed.Change() {
		if time.Now().After(deadline) {
			t.Fatal("a step after 20ms not due after 10s")
		}
		time.Sleep(time.Millisecond)
	}
}
