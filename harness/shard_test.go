package harness

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/backfill-bench/backfill-bench/bench"
	"github.com/backfill-bench/backfill-bench/bench/profile"
)

func TestShardCellsPartitionAndBalance(t *testing.T) {
	profiles, err := profile.NewSet(nil)
	if err != nil {
		t.Fatal(err)
	}
	m := NightlyMatrix(profiles)
	m.Workloads = []string{"narrow", "bid", "wide"}
	all := m.Cells()
	// The largest on/off pair bounds what any split can do.
	pairs := map[bench.Cell]float64{}
	for _, c := range all {
		p, _ := profiles.Get(c.Profile)
		k := c
		k.Persist = false
		pairs[k] += EstimateCost(c, p)
	}
	largest := 0.0
	for _, c := range pairs {
		largest = max(largest, c)
	}
	for _, n := range []int{1, 2, 3, 5, 8} {
		var union []bench.Cell
		var costs []float64
		for i := 1; i <= n; i++ {
			cells := ShardCells(all, profiles, Shard{i, n})
			union = append(union, cells...)
			cost := 0.0
			for _, c := range cells {
				p, _ := profiles.Get(c.Profile)
				cost += EstimateCost(c, p)
				// On and off of a configuration run on one machine.
				twin := c
				twin.Persist = !c.Persist
				if !slices.Contains(cells, twin) {
					t.Errorf("n=%d shard %d has %s without its persist twin", n, i, c.Name())
				}
			}
			costs = append(costs, cost)
		}
		names := func(cs []bench.Cell) []string {
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

// TestMergeShardsEqualsUnsharded runs the fake matrix whole and in three shards and
// checks the merged shard files hold the same results.
func TestMergeShardsEqualsUnsharded(t *testing.T) {
	lines := func(data []byte) []string {
		var out []string
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "Benchmark") {
				out = append(out, l)
			}
		}
		sort.Strings(out)
		return out
	}
	whole := fakeConfig(t, "1,6,7", 2)
	whole.Matrix.Workloads = []string{"narrow", "bid"}
	if _, err := RunMatrix(context.Background(), whole); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(whole.Out, "results.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for i := 1; i <= 3; i++ {
		cfg := whole
		cfg.Out, cfg.Shard = t.TempDir(), Shard{i, 3}
		if _, err := RunMatrix(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.Join(cfg.Out, "results.txt"))
	}
	merged, err := MergeResults(files)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := lines(merged), lines(want); !slices.Equal(got, want) {
		t.Errorf("merged shards:\n%s\nunsharded:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(string(merged), "Unit rows/s better=higher") || !strings.Contains(string(merged), "machine: ") {
		t.Errorf("merged file lost its unit or config lines:\n%s", merged)
	}
}
