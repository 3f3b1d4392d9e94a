package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/pipeline"
	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/rates"
)

// TestWarmUp: with -warmup, a benchmark runs one job of its own on a prepared job
// before its timed ones, with the timer stopped; without, none.
func TestWarmUp(t *testing.T) {
	cell := contract.Cell{Profile: "mem", Workload: "narrow", Rows: 2000, Persist: true, Scan: "snapshot", Barrier: rates.Cadence{Rows: 500}, Par: 2}
	cfg, err := jobConfig(cell)
	if err != nil {
		t.Fatal(err)
	}
	profiles, err := profile.NewSet(nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profiles.Get(cell.Profile)
	if err != nil {
		t.Fatal(err)
	}
	defer func(was bool) { *flags.Warmup = was }(*flags.Warmup)
	for _, on := range []bool{false, true} {
		*flags.Warmup = on
		calls, warmups := 0, 0
		var timed time.Duration
		testing.Benchmark(func(b *testing.B) {
			calls++
			warmUp(b, p, cfg, func(j *pipeline.Job, ctx context.Context) (*pipeline.Result, error) {
				warmups++
				if j.Store() == nil {
					t.Error("the warm-up job is not prepared")
				}
				before := b.Elapsed()
				time.Sleep(20 * time.Millisecond)
				timed += b.Elapsed() - before
				return &pipeline.Result{}, nil
			})
		})
		want := 0
		if on {
			want = calls
		}
		if warmups != want {
			t.Errorf("-warmup=%v: %d warm-up jobs in %d runs of the benchmark, want %d", on, warmups, calls, want)
		}
		if timed > 0 {
			t.Errorf("-warmup=%v: the warm-up job ran %v on the benchmark's timer", on, timed)
		}
	}
}
