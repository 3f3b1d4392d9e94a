package harness

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/backfill-bench/backfill-bench/bench"
	"github.com/backfill-bench/backfill-bench/bench/profile"
)

// Shard is one part of a matrix split over runners: Index of Count, from 1.
type Shard struct{ Index, Count int }

// ParseShard reads "i/n".
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{1, 1}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("--shard %q: want i/n with 1 ≤ i ≤ n, like 2/4", s)
	}
	return Shard{i, n}, nil
}

// workloadCost is a workload table's relative cost per row (narrow = 1), measured
// on the in-memory profile.
var workloadCost = map[string]float64{"narrow": 1, "bid": 2.5, "person": 2.5, "auction": 3, "wide": 6}

// EstimateCost is a cell's expected seconds per run: a process start and the load
// of table A, plus the job, by rows, workload and the profile's disk.
func EstimateCost(c bench.Cell, p profile.Profile) float64 {
	table, _, _ := strings.Cut(c.Workload, "+")
	w, ok := workloadCost[table]
	if !ok {
		w = 3
	}
	perRow := 4e-6 * w // load + job + verification on mem, 2 cores
	bytes := 400 * w * float64(c.Rows)
	cost := 0.3 + perRow*float64(c.Rows)
	if p.WriteBandwidth > 0 {
		cost += bytes / float64(p.WriteBandwidth)
	}
	return cost
}

// ShardCells picks the shard's cells. Cells that differ only in persist stay
// together, so that each on/off pair is measured on one machine; groups go to
// shards by longest-processing-time-first on the estimated cost, which is
// deterministic and balanced, and every cell lands in exactly one shard.
func ShardCells(cells []bench.Cell, profiles *profile.Set, s Shard) []bench.Cell {
	type group struct {
		key   bench.Cell
		cells []bench.Cell
		cost  float64
	}
	var groups []*group
	index := map[bench.Cell]*group{}
	for _, c := range cells {
		k := c
		k.Persist = false
		g := index[k]
		if g == nil {
			g = &group{key: k}
			index[k] = g
			groups = append(groups, g)
		}
		p, _ := profiles.Get(c.Profile)
		g.cells = append(g.cells, c)
		g.cost += EstimateCost(c, p)
	}
	order := append([]*group(nil), groups...)
	sort.SliceStable(order, func(i, j int) bool { return order[i].cost > order[j].cost })
	load := make([]float64, s.Count)
	owner := map[*group]int{}
	for _, g := range order {
		best := 0
		for i := range load {
			if load[i] < load[best] {
				best = i
			}
		}
		load[best] += g.cost
		owner[g] = best
	}
	var out []bench.Cell
	for _, g := range groups { // plan order within the shard
		if owner[g] == s.Index-1 {
			out = append(out, g.cells...)
		}
	}
	return out
}

// MergeResults combines results files (of shards, say) into one benchfmt text:
// the union of unit lines, then every result with its config.
func MergeResults(files []string) ([]byte, error) {
	results, units, err := readResultFiles(files...)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := writeBenchfmt(&buf, results, units); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
