package runner

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/rates"
	"github.com/backfill-bench/backfill-bench/harness/runner/cost"
)

func TestShardCellsPartitionAndBalance(t *testing.T) {
	profiles, err := profile.NewSet(nil)
	if err != nil {
		t.Fatal(err)
	}
	var nightly []string
	for _, p := range profiles.All() {
		if p.Nightly {
			nightly = append(nightly, p.Name)
		}
	}
	m := contract.Matrix{Profiles: nightly, Workloads: []string{"narrow", "bid", "wide"}, Rows: []int64{300_000},
		Persist: []bool{false, true}, Scans: contract.Scans, Barriers: []rates.Cadence{rates.Every(100 * time.Millisecond), rates.Every(time.Second)}, Pars: []int{2}}
	all := m.Cells()
	// The largest on/off pair bounds what any split can do.
	pairs := map[contract.Cell]float64{}
	for _, c := range all {
		p, _ := profiles.Get(c.Profile)
		k := c
		k.Persist = false
		pairs[k] += cost.Run(c, p)
	}
	largest := 0.0
	for _, c := range pairs {
		largest = max(largest, c)
	}
	for _, n := range []int{1, 2, 3, 5, 8} {
		var union []contract.Cell
		var costs []float64
		for i := 1; i <= n; i++ {
			cells := ShardCells(all, profiles, Shard{i, n})
			union = append(union, cells...)
			secs := 0.0
			for _, c := range cells {
				p, _ := profiles.Get(c.Profile)
				secs += cost.Run(c, p)
				// On and off of a configuration run on one machine.
				twin := c
				twin.Persist = !c.Persist
				if !slices.Contains(cells, twin) {
					t.Errorf("n=%d shard %d has %s without its persist twin", n, i, c.Name())
				}
			}
			costs = append(costs, secs)
		}
		names := func(cs []contract.Cell) []string {
			var out []string
			for _, c := range cs {
				out = append(out, c.Name())
			}
			sort.Strings(out)
			return out
		}
		if !slices.Equal(names(union), names(all)) {
			t.Errorf("n=%d: the shards' union is not the plan (%d cells vs %d)", n, len(union), len(all))
		}
		mean := 0.0
		for _, c := range costs {
			mean += c / float64(n)
		}
		t.Logf("n=%d: estimated seconds per round by shard %.0f", n, costs)
		if hi := slices.Max(costs); hi > max(1.15*mean, largest+0.01) {
			t.Errorf("n=%d: shards %v unbalanced (mean %.0f, largest pair %.0f)", n, costs, mean, largest)
		}
	}
	if got := ShardCells(all, profiles, Shard{1, 1}); len(got) != len(all) {
		t.Errorf("1/1 has %d cells, want all %d", len(got), len(all))
	}
}

func TestParseShard(t *testing.T) {
	for in, ok := range map[string]bool{"1/1": true, "2/4": true, "0/4": false, "5/4": false, "a/b": false, "3": false, "1/0": false} {
		if _, err := ParseShard(in); (err == nil) != ok {
			t.Errorf("ParseShard(%q): err = %v", in, err)
		}
	}
}

// TestPlanPairsBackToBackInTurn: in a compare, every round runs each cell's base
// and head back to back, each side first in half the rounds, and the cells in
// their order, so that the run before a pair is another cell's in both turns;
// rounds added later continue the turns. In a plain run a cell's persist off and
// on take turns the same way.
func TestPlanPairsBackToBackInTurn(t *testing.T) {
	cells := []contract.Cell{{Workload: "narrow", Rows: 1}, {Workload: "bid", Rows: 1}}
	trials := append(Plan(cells, 3, 2), PlanRounds(cells, 4, 3, 2)...)
	first := map[int]int{} // side → pairs in which it ran first
	for i := 0; i < len(trials); i += 2 {
		a, b := trials[i], trials[i+1]
		if a.Cell != b.Cell || a.Round != b.Round || a.Side == b.Side {
			t.Fatalf("trials %d and %d: %+v, %+v; want one cell's two sides back to back", i, i+1, a, b)
		}
		if want := cells[(i/2)%len(cells)]; a.Cell != want {
			t.Errorf("trial %d is of %v, want %v: the cells keep their order", i, a.Cell, want)
		}
		first[a.Side]++
	}
	if first[0] != 6 || first[1] != 6 {
		t.Errorf("base first in %d pairs, head in %d; want 6 each", first[0], first[1])
	}
	for i, tr := range trials[:len(trials)/2] {
		if tr.Index != i+1 {
			t.Errorf("trial %d has index %d", i, tr.Index)
		}
	}

	off := contract.Cell{Workload: "narrow", Rows: 1}
	on := off
	on.Persist = true
	alone := contract.Cell{Workload: "bid", Rows: 1}
	var got []string
	for _, tr := range Plan([]contract.Cell{off, on, alone}, 2, 1) {
		got = append(got, fmt.Sprintf("%s/%v", tr.Cell.Workload, tr.Cell.Persist))
	}
	if want := "[narrow/false narrow/true bid/false narrow/true narrow/false bid/false]"; fmt.Sprint(got) != want {
		t.Errorf("plain run order %v, want %s", got, want)
	}
}
