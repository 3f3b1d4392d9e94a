package cost

import (
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/rates"
)

// TestRunFollowsTheMeasuredFigures: a quick-suite cell's estimate is the measured
// run's (3 s on mem, narrow), each compaction mode its measured multiple of it,
// and a rate limit's scan time bounds it from below.
func TestRunFollowsTheMeasuredFigures(t *testing.T) {
	set, err := profile.NewSet(nil)
	if err != nil {
		t.Fatal(err)
	}
	quick := contract.Cell{Profile: "mem", Workload: "narrow", Rows: 300_000, Par: 2, Barrier: rates.Every(100 * time.Millisecond)}
	limited := quick
	limited.Limit = rates.RateLimit{Rate: 10_000} // two actors at 10k rows/s: 15 s of scan
	for _, tc := range []struct {
		profile string
		cell    contract.Cell
		lo, hi  float64 // seconds
	}{
		{"mem", quick, 2.5, 3.5},
		{"hummock", quick, 14 * 2.7, 14*2.7 + 1},
		{"engine", quick, 1.4 * 2.7, 1.4*2.7 + 1},
		{"mem", limited, 15, 16},
	} {
		p, err := set.Get(tc.profile)
		if err != nil {
			t.Fatal(err)
		}
		if got := Run(tc.cell, p); got < tc.lo || got > tc.hi {
			t.Errorf("%s %s: estimate %.2f s, want %.1f–%.1f s", tc.profile, tc.cell.Name(), got, tc.lo, tc.hi)
		}
	}
}
