package runner

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/contracttest"
)

// TestNewDimensionInPlanAndShards: a dimension added to the contract's table (and
// nothing else) is in the dry-run plan's cell names and bench arguments, and
// shards split its values while each persist pair stays on one shard.
func TestNewDimensionInPlanAndShards(t *testing.T) {
	contracttest.Colour(t)
	set, err := profile.NewSet(nil)
	if err != nil {
		t.Fatal(err)
	}
	var m contract.Matrix
	for _, dv := range [][2]string{{"profile", "mem"}, {"workload", "narrow"}, {"rows", "1"}, {"persist", "off,on"},
		{"scan", "merged"}, {"barrier", "100ms"}, {"par", "1"}, {"colour", "blue,red"}} {
		if err := m.Set(dv[0], dv[1]); err != nil {
			t.Fatal(err)
		}
	}
	cells := m.Cells()
	var b bytes.Buffer
	if err := WritePlan(&b, set, []string{"mem"}, cells, Plan(cells, 1, 1), Shard{1, 1}, Sequential, false); err != nil {
		t.Fatal(err)
	}
	if plan := b.String(); !strings.Contains(plan, "/colour=blue/par=") || !strings.Contains(plan, "-colour blue") {
		t.Errorf("plan without the colour dimension:\n%s", plan)
	}
	var union []contract.Cell
	for i := 1; i <= 2; i++ {
		shard := ShardCells(cells, set, Shard{i, 2})
		for _, c := range shard {
			twin := c
			twin.Persist = !c.Persist
			if !slices.Contains(shard, twin) {
				t.Errorf("shard %d has %s without its persist twin", i, c.Name())
			}
		}
		if len(shard) == len(cells) {
			t.Errorf("shard %d has every cell: colours were not split", i)
		}
		union = append(union, shard...)
	}
	if len(union) != len(cells) {
		t.Errorf("shards hold %d cells, want %d", len(union), len(cells))
	}
}
