package runner

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/runner/cost"
)

// Trial is one process of a bench binary: one job of one cell on one side.
type Trial struct {
	Index int // 1-based, in execution order within its pass
	Round int // 1-based
	Cell  contract.Cell
	Side  int // which build runs it: 0 in a plain run; 0 base, 1 head in a compare
}

// Plan orders count rounds, each running every cell once on each of the sides in
// turn, so that drift of the machine over time spreads over all cells and sides
// alike: A B A B …, not A A … B B …. The two runs of a pair stay together (a
// cell's base and head; in a plain run a cell's persist off and on), and in even
// rounds they swap, so that whatever the second run meets (a warmer cache, a
// hotter machine) falls on each in turn and cancels instead of biasing the pair's
// ratio. The cells keep their order, so the run before a pair is another cell's
// in both turns.
func Plan(cells []contract.Cell, count, sides int) []Trial { return PlanRounds(cells, 1, count, sides) }

// PlanRounds is Plan with rounds numbered from first on: more rounds of a pass
// that ran rounds 1 … first−1.
func PlanRounds(cells []contract.Cell, first, count, sides int) []Trial {
	var trials []Trial
	add := func(r int, c contract.Cell, s int) {
		trials = append(trials, Trial{Index: len(trials) + 1, Round: r, Cell: c, Side: s})
	}
	for r := first; r < first+count; r++ {
		swap := r%2 == 0
		for i := 0; i < len(cells); i++ {
			c := cells[i]
			switch {
			case sides > 1:
				for s := range sides {
					if swap {
						s = sides - 1 - s
					}
					add(r, c, s)
				}
			case swap && i+1 < len(cells) && persistPair(c, cells[i+1]):
				add(r, cells[i+1], 0)
				add(r, c, 0)
				i++
			default:
				add(r, c, 0)
			}
		}
	}
	return trials
}

// persistPair reports whether a and b are one cell with persistence off and on.
func persistPair(a, b contract.Cell) bool { return a != b && a.PairKey() == b.PairKey() }

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

// ShardCells picks the shard's cells. Cells that differ only in persist stay
// together, so that each on/off pair is measured on one machine; groups go to
// shards by longest-processing-time-first on the estimated cost, which is
// deterministic and balanced, and every cell lands in exactly one shard.
func ShardCells(cells []contract.Cell, profiles *profile.Set, s Shard) []contract.Cell {
	type group struct {
		cells []contract.Cell
		cost  float64
	}
	var groups []*group
	index := map[contract.Cell]*group{}
	for _, c := range cells {
		k := c.PairKey()
		g := index[k]
		if g == nil {
			g = &group{}
			index[k] = g
			groups = append(groups, g)
		}
		p, _ := profiles.Get(c.Profile)
		g.cells = append(g.cells, c)
		g.cost += cost.Run(c, p)
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
	var out []contract.Cell
	for _, g := range groups { // plan order within the shard
		if owner[g] == s.Index-1 {
			out = append(out, g.cells...)
		}
	}
	return out
}

// duetShare is a duet's wall time as a share of its two runs back to back: both
// processes load, verify and settle at once too (measured with the quick cells on
// 2 cores: 0.33–0.37).
const duetShare = 0.35

// WritePlan prints what a run would do, for --dry-run; warm: each run
// warms up with an untimed job first (PassConfig.Warmup).
func WritePlan(w io.Writer, set *profile.Set, used []string, cells []contract.Cell, trials []Trial, shard Shard, pairing Pairing, warm bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	rounds := 0
	if len(cells) > 0 {
		rounds = len(trials) / len(cells)
	}
	part := ""
	if shard.Count > 1 {
		part = fmt.Sprintf(" (shard %d of %d)", shard.Index, shard.Count)
	}
	estimate, duets, warmed := 0.0, 0, 0
	runSecs := func(c contract.Cell, p profile.Profile) float64 {
		if warm {
			warmed++
			return cost.Warmup * cost.Run(c, p)
		}
		return cost.Run(c, p)
	}
	for i := 0; i < len(trials); i++ {
		p, _ := set.Get(trials[i].Cell.Profile)
		secs := runSecs(trials[i].Cell, p)
		if pairing == Duet && i+1 < len(trials) && paired(trials[i], trials[i+1]) && duetFits(p) {
			secs = duetShare * (secs + runSecs(trials[i+1].Cell, p))
			duets++
			i++
		}
		estimate += secs
	}
	how := ""
	if duets > 0 {
		how = fmt.Sprintf(", %d pairs of them at once (duets)", duets)
	}
	if warmed > 0 {
		how += fmt.Sprintf(", %d of them running an untimed job of their cell before the timed one (-%s)", warmed, contract.FlagWarmup)
	}
	fmt.Fprintf(tw, "plan%s: %d cells × %d rounds = %d runs, one process each%s, every round running every cell once; about %v on 2 cores\n\n",
		part, len(cells), rounds, len(trials), how, time.Duration(estimate*float64(time.Second)).Round(time.Second))
	fmt.Fprintln(tw, "profiles:")
	for _, name := range used {
		p, _ := set.Get(name)
		fmt.Fprintf(tw, "  %s\t%s\n", p.Name, p.Describe())
	}
	fmt.Fprintf(tw, "\ncells (Benchmark%s/…):\n", contract.BenchmarkName)
	for i, c := range cells {
		fmt.Fprintf(tw, "  %d\t%s\n", i+1, c.Name())
	}
	if len(cells) > 0 {
		fmt.Fprintf(tw, "\neach run is the bench binary with, for cell 1:\n  %s\n", QuoteArgs(warmArgs(warm, cells[0].Args("FILE", nil))))
	}
	return tw.Flush()
}

// QuoteArgs renders a command line so that a shell would read it back the same.
func QuoteArgs(args []string) string {
	var out []string
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}
