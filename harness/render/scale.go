package render

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/backfill-bench/backfill-bench/contract"
)

// scaleMetrics are the panels of the scale plot: a metric per size, with its
// direction in the axis label.
var scaleMetrics = []struct{ unit, label string }{
	{contract.UnitRowsPerSec, "rows/s (higher is better)"},
	{contract.UnitWriteAmp, "write-amp (lower is better)"},
	{contract.UnitStatePerMV, "state ÷ MV bytes"},
	{contract.UnitPersistBytes, "bytes persistence adds per job (persist-B/op)"},
}

// logTicks marks a log axis at powers of ten, or, when the range holds fewer than
// two of them, where a linear axis would, so that a narrow range is labelled too.
var logTicks = plot.TickerFunc(func(min, max float64) []plot.Tick {
	ticks := plot.LogTicks{Prec: -1}.Ticks(min, max)
	labelled := 0
	for _, t := range ticks {
		if t.Label != "" && t.Value >= min && t.Value <= max {
			labelled++
		}
	}
	if labelled >= 2 {
		return ticks
	}
	return plot.DefaultTicks{}.Ticks(min, max)
})

// PlotScale draws how a configuration's figures grow with the table: rows/s,
// write-amp and state ÷ MV bytes against rows on log-log axes, one line per
// persistence mode (the median per size), and the raw copy's rows/s as the
// reference where the results hold BenchmarkRawCopy runs. It returns false when
// the results have fewer than two sizes.
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
			s := "persist=" + contract.OnOff(c.Persist)
			if len(barriers) > 1 { // one line per cadence too: their epochs differ
				s = "barrier=" + c.Barrier.String() + " " + s
			}
			for _, m := range scaleMetrics {
				if v, ok := r.Value(m.unit); ok {
					add(m.unit, s, c.Rows, v)
				}
			}
			continue
		}
		if base, parts := r.Name.Parts(); string(base) == "RawCopy" {
			var rows int64
			for _, p := range parts {
				fmt.Sscanf(strings.TrimPrefix(string(p), "/"), "rows=%d", &rows)
			}
			if v, ok := r.Value(contract.UnitRowsPerSec); ok && rows > 0 {
				add(contract.UnitRowsPerSec, "raw copy", rows, v)
			}
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
		p := newPlot(t, "rows (log scale)", m.label+", log scale")
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker, p.Y.Tick.Marker = logTicks, logTicks
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
			c := variantColor(j)
			if s == "raw copy" {
				c = colorGrey
				l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
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
		panels = append(panels, []*plot.Plot{p})
	}
	return true, savePlots(panels, plotWidth, plotHeight*vg.Length(0.8*float64(len(panels))), base)
}
