package render

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchfmt"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/render/chart"
)

// scaleMetrics are the panels of the scale plot: a metric per size, with its
// direction in the axis label.
var scaleMetrics = []struct{ unit, label string }{
	{contract.UnitRowsPerSec, "rows/s (higher is better)"},
	{contract.UnitWriteAmp, "write-amp (lower is better)"},
	{contract.UnitStatePerMV, "state ÷ MV bytes (lower is better)"},
	{contract.UnitPersistBytes, "bytes persistence adds per job, persist-B/op (lower is better)"},
}

// PlotScale draws how a configuration's figures grow with the table: rows/s,
// write-amp and state ÷ MV bytes against rows on log-log axes, one line per
// persistence mode (the median per size), and the baselines' rows/s as references
// where the results hold them: the append-order copy (grey, dashed), the
// scan-only read (black, dotted) and each cell's replay (its colour, dashed). It
// returns false when the results have fewer than two sizes.
func PlotScale(results []*benchfmt.Result, title, base string) (bool, error) {
	type key struct {
		series string
		rows   int64
	}
	values := map[string]map[key][]float64{} // unit → (series, rows) → values
	var series []string
	sizes := map[int64]bool{}
	add := func(unit, s string, rows int64, v float64) {
		if v <= 0 {
			return // a log axis has no place for it
		}
		if values[unit] == nil {
			values[unit] = map[key][]float64{}
		}
		values[unit][key{s, rows}] = append(values[unit][key{s, rows}], v)
		if !slices.Contains(series, s) {
			series = append(series, s)
		}
		sizes[rows] = true
	}
	barriers := map[string]bool{}
	for _, r := range results {
		if c, ok := contract.CellOf(r); ok {
			barriers[c.Barrier.String()] = true
		}
	}
	for _, r := range results {
		if c, ok := contract.CellOf(r); ok {
			s := seriesOf(c, len(barriers) > 1)
			for _, m := range scaleMetrics {
				if v, ok := r.Value(m.unit); ok {
					add(m.unit, s, c.Rows, v)
				}
			}
			continue
		}
		base, c, ok := contract.BaselineCell(r)
		v, okV := r.Value(contract.UnitRowsPerSec)
		if !ok || !okV {
			continue
		}
		switch base {
		case contract.RawCopyBenchmark, contract.ScanOnlyBenchmark:
			if c.Rows > 0 {
				add(contract.UnitRowsPerSec, baselineLabel(base), c.Rows, v)
			}
		case contract.ReplayBenchmark:
			add(contract.UnitRowsPerSec, replayPrefix+seriesOf(c, len(barriers) > 1), c.Rows, v)
		}
	}
	if len(sizes) < 2 {
		return false, nil
	}
	slices.Sort(series)
	var panels [][]*plot.Plot
	for i, m := range scaleMetrics {
		if len(values[m.unit]) == 0 {
			continue
		}
		t := ""
		if i == 0 {
			t = title
		}
		p := chart.New(t, "rows (log scale)", m.label+", log scale")
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker, p.Y.Tick.Marker = chart.Ticks{Unit: "rows", Log: true}, chart.MetricTicks(m.unit, true)
		for j, s := range series {
			var xys plotter.XYs
			for rows := range sizes {
				if vs := values[m.unit][key{s, rows}]; len(vs) > 0 {
					slices.Sort(vs)
					xys = append(xys, plotter.XY{X: float64(rows), Y: vs[len(vs)/2]})
				}
			}
			if len(xys) == 0 {
				continue
			}
			slices.SortFunc(xys, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
			l, pts, err := plotter.NewLinePoints(xys)
			if err != nil {
				return false, err
			}
			c := chart.Variant(j)
			switch {
			case s == baselineLabel(contract.RawCopyBenchmark):
				c = chart.Grey
				l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			case s == baselineLabel(contract.ScanOnlyBenchmark):
				c = chart.Black
				l.Dashes = []vg.Length{vg.Points(1), vg.Points(3)}
			case strings.HasPrefix(s, replayPrefix): // its cell's colour, dashed
				if k := slices.Index(series, strings.TrimPrefix(s, replayPrefix)); k >= 0 {
					c = chart.Variant(k)
				}
				l.Dashes = []vg.Length{vg.Points(6), vg.Points(2)}
			}
			l.Color, pts.Color = c, c
			p.Add(l, pts)
			p.Legend.Add(s, l, pts)
		}
		// A log axis needs a range above 0: a flat metric gets one around its value.
		for _, ax := range []*plot.Axis{&p.X, &p.Y} {
			if ax.Min >= ax.Max && ax.Max > 0 {
				ax.Min, ax.Max = ax.Max/1.5, ax.Max*1.5
			}
		}
		// The legend's room at the top, on a log axis a factor.
		p.Y.Max *= math.Pow(p.Y.Max/p.Y.Min, max(0.25, 0.1*float64(len(series))))
		panels = append(panels, []*plot.Plot{p})
	}
	return true, chart.Save(panels, chart.Width, chart.Height*vg.Length(0.8*float64(len(panels))), base)
}

// replayPrefix names a replay's line: "replay " and its cell's series.
const replayPrefix = "replay "

// seriesOf is a cell's line in the scale plot: its persistence mode, and its
// cadence when the results have several (their epochs differ).
func seriesOf(c contract.Cell, cadences bool) string {
	s := c.Field("persist").String()
	if cadences {
		s = c.Field("barrier").String() + " " + s
	}
	return s
}

// baselineLabel is how tables and plots name a baseline's benchmark.
func baselineLabel(benchmark string) string {
	for _, b := range contract.Baselines {
		if b.Benchmark == benchmark {
			return b.Label
		}
	}
	return benchmark
}

// WriteBaselines writes, for every backfill cell of the results that has a
// baseline among them, its rows/s divided by each baseline's (medians over the
// rounds): ÷ replay is the executor's own cost (1 = none), ÷ append-order copy
// the distance from the storage's limit for the table, ÷ scan-only the share of
// the time the reads take. Beside the replay's per-round ratio it writes the
// ratio its CPU allows, round by round: the replay's CPU per row (the job's and
// its compactions') ÷ the backfill's. Where the two agree both runs were bound by
// the machine's CPU, and the gap is the backfill's extra CPU, not its waits. Then
// the same for the replay at its backfill's pace (baseline.PacedReplay), and the
// backfill's compaction bytes ÷ each replay's: the three flush the same bytes, but
// compactions run when they get the CPU, so a slower job compacts more for the
// same flushes, and part of the gap is that storage work, not the executor's. Last,
// the ceiling of ÷ replay where both are CPU-bound: what a backfill would reach
// whose CPU beyond the replay's were only the scan-only read's (ceiling). It
// writes nothing and returns false when no cell has a baseline.
func WriteBaselines(w io.Writer, results []*benchfmt.Result) (bool, error) {
	byName := map[string]*rounds{}
	var cells []contract.Cell
	for _, r := range results {
		v, ok := r.Value(contract.UnitRowsPerSec)
		if !ok {
			continue
		}
		name := contract.Label(string(r.Name))
		if c, ok := contract.CellOf(r); ok {
			name = c.FullName()
			if byName[name] == nil {
				cells = append(cells, c)
			}
		}
		if byName[name] == nil {
			byName[name] = &rounds{}
		}
		byName[name].add(r, v)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "backfill rows/s\t"
	for _, b := range contract.Baselines {
		header += "÷ " + b.Label + "\t"
		if b.Benchmark == contract.ReplayBenchmark {
			header += "per round\tCPU per round\tpaced CPU per round\tcompaction B per round\tpaced compaction B per round\t"
		}
	}
	header += "ceiling\t"
	wrote := false
	for _, c := range cells {
		bf := byName[c.FullName()]
		bfRows := judge.Median(bf.rows)
		line := fmt.Sprintf("%.0f\t", bfRows)
		any := false
		for _, b := range contract.Baselines {
			base := byName[c.BaselineName(b.Benchmark)]
			if base == nil {
				base = &rounds{}
			}
			if len(base.rows) > 0 && bfRows > 0 {
				line += fmt.Sprintf("%.3f\t", bfRows/judge.Median(base.rows))
				any = true
			} else {
				line += "—\t"
			}
			if b.Benchmark == contract.ReplayBenchmark {
				for _, col := range [][2][]float64{{bf.rows, base.rows}, {base.cpu, bf.cpu}, {base.pacedCPU, bf.cpu},
					{bf.compactBytes, base.compactBytes}, {bf.compactBytes, base.pacedBytes}} {
					line += perRound(col[0], col[1]) + "\t"
				}
			}
		}
		if !any {
			continue
		}
		line += ceiling(bf, byName[c.BaselineName(contract.ReplayBenchmark)], byName[c.BaselineName(contract.ScanOnlyBenchmark)]) + "\t"
		if !wrote {
			if _, err := fmt.Fprintf(w, "baselines: backfill rows/s ÷ each baseline's (medians over the rounds; replay: the same epoch batches and syncs without the executor, per round: the median (min–max) of each round's ratio, the replay run right after the cell, the paired figure; CPU per round: the replay's CPU per row, the job's and its compactions', ÷ the backfill's, round by round: where it is the per-round ratio, both ran CPU-bound and the gap is the backfill's extra CPU; paced: the same of the replay run again at its recorded backfill's pace; compaction B per round: the backfill's compaction bytes ÷ the replay's (paced: ÷ the paced replay's), round by round: the three flush the same bytes, but a slower job's compactions rewrite more, so where the backfill's lie between the two replays' its executor's share of its CPU lies between 1 − paced CPU and 1 − CPU; append-order copy: the storage's limit; scan-only: the reads alone; ceiling: what ÷ replay could reach, with the cores as busy as the replay's, if the backfill spent beyond the replay's CPU only the scan-only read's: the replay's CPU ÷ (the replay's + the scan-only read's), per row the backfill handled, of the medians)\n"); err != nil {
				return false, err
			}
			fmt.Fprintf(tw, "%s\tcell\n", header)
			wrote = true
		}
		fmt.Fprintf(tw, "%s\t%s\n", line, c.Name())
	}
	if !wrote {
		return false, nil
	}
	return true, tw.Flush()
}

// rounds are one benchmark's figures, a value per round in run order.
type rounds struct {
	rows         []float64
	cpu          []float64 // CPU per row, the job's and its compactions'
	compactBytes []float64
	// A replay's at its backfill's pace (0 for others): CPU as cpu, compaction bytes.
	pacedCPU, pacedBytes []float64
	handled              []float64 // rows per op: rows/s × sec/op
}

// add appends r's figures, rows/s v among them; a figure r lacks is 0.
func (f *rounds) add(r *benchfmt.Result, v float64) {
	value := func(unit string) float64 {
		x, _ := r.Value(contract.Tidy(unit)) // ns units read back in sec
		return x
	}
	f.rows = append(f.rows, v)
	f.cpu = append(f.cpu, value(contract.UnitCPUPerRow)+value(contract.UnitCompactCPUPerRow))
	f.compactBytes = append(f.compactBytes, value(contract.FSUnit("compaction")))
	f.pacedCPU = append(f.pacedCPU, value(contract.UnitPacedCPUPerRow)+value(contract.UnitPacedCompactCPUPerRow))
	f.pacedBytes = append(f.pacedBytes, value(contract.UnitPacedCompactionBytes))
	f.handled = append(f.handled, v*value(contract.UnitSecPerOp))
}

// ceiling is the backfill ÷ replay that a backfill would reach whose CPU were the
// replay's plus the scan-only read's, the least an executor does (it reads and
// decodes the snapshot, writing nothing), with its cores as busy as the replay's:
// where both jobs are CPU-bound, their time ratio is their CPU ratio. The CPUs
// are medians, per row the backfill handled (the scan-only read reads only the
// snapshot's rows). "—" without a replay or scan-only read, or a figure missing.
func ceiling(backfill, replay, scan *rounds) string {
	if replay == nil || scan == nil {
		return "—"
	}
	rows, replayCPU := judge.Median(backfill.handled), judge.Median(replay.cpu)
	scanCPU := judge.Median(scan.cpu) * judge.Median(scan.handled)
	if rows <= 0 || replayCPU <= 0 || scanCPU <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.3f", replayCPU/(replayCPU+scanCPU/rows))
}

// perRound is the per-round ratios num ÷ den (backfill ÷ replay rows/s, replay ÷
// backfill CPU per row, backfill ÷ replay compaction bytes), "median (min–max)",
// the i-th replay taken as the i-th backfill's (each runs right after its cell's
// job, in round order); "—" when the two do not pair one to one, there is one
// round, or a figure is missing or 0 (no compactions).
func perRound(num, den []float64) string {
	if len(num) != len(den) || len(num) < 2 {
		return "—"
	}
	ratios := make([]float64, len(num))
	for i, n := range num {
		if n <= 0 || den[i] <= 0 {
			return "—"
		}
		ratios[i] = n / den[i]
	}
	return fmt.Sprintf("%.3f (%.3f–%.3f)", judge.Median(ratios), slices.Min(ratios), slices.Max(ratios))
}
