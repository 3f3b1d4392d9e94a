// Package gridplot draws a run's or a compare's grid of results: the variants' key
// metrics, bytes written by category, and head-vs-base changes.
package gridplot

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/render/chart"
)

// barPlot is one metric of a grid as grouped bars: a group per row, a bar per
// column, whiskers for the 95 % confidence interval where n allows one.
func barPlot(t *judge.GridTable, colNames []string) (*plot.Plot, error) {
	p := chart.New(fmt.Sprintf("%s (%s)", t.Unit, chart.Better(t.Better)), "", "median, 95 % CI")
	p.Y.Tick.Marker = chart.MetricTicks(t.Unit, false)
	var rowNames []string
	for _, r := range t.Rows {
		rowNames = append(rowNames, r.StringValues())
	}
	labels := chart.RowLabels(rowNames)
	n := len(t.Cols)
	width := vg.Points(math.Min(40, 360/float64(len(t.Rows)*n)))
	noCI := false
	for j, col := range t.Cols {
		vals := make(plotter.Values, len(t.Rows))
		var whiskers chart.ErrorPoints
		for i, row := range t.Rows {
			c := t.Cells[judge.GridKey{Row: row, Col: col}]
			if c == nil {
				continue
			}
			vals[i] = c.Summary.Center
			x := float64(i) + (float64(j)-float64(n-1)/2)*0.8/float64(n)
			if math.IsInf(c.Summary.Lo, 0) || math.IsInf(c.Summary.Hi, 0) {
				noCI = true
				continue
			}
			whiskers = append(whiskers, chart.ErrorPoint{X: x, Y: c.Summary.Center, Lo: c.Summary.Center - c.Summary.Lo, Hi: c.Summary.Hi - c.Summary.Center})
		}
		bars, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, err
		}
		bars.Color = chart.Variant(j)
		bars.LineStyle.Width = 0
		bars.XMin = (float64(j) - float64(n-1)/2) * 0.8 / float64(n)
		p.Add(bars)
		p.Legend.Add(colNames[j], bars)
		if len(whiskers) > 0 {
			eb, err := plotter.NewYErrorBars(whiskers)
			if err != nil {
				return nil, err
			}
			p.Add(eb)
		}
	}
	p.NominalX(labels...)
	if noCI {
		p.Title.Text += " (no interval where n < 6)"
	}
	chart.Headroom(p, n)
	return p, nil
}

// Variants draws the key metrics as grouped bars per cell group, one bar per
// variant (persist off/on, or base/head), with 95 % CI whiskers.
func Variants(g *judge.Grid, colNames []string, title, base string) error {
	want := chart.KeyUnits
	byUnit := map[string]*judge.GridTable{}
	for _, t := range g.Tables {
		byUnit[t.Unit] = t
	}
	var tiles []*plot.Plot
	for _, u := range want {
		t := byUnit[u]
		if t == nil {
			continue
		}
		p, err := barPlot(t, colNames)
		if err != nil {
			return err
		}
		tiles = append(tiles, p)
	}
	if len(tiles) == 0 {
		return fmt.Errorf("plot %s: none of %s in the results", title, strings.Join(want, ", "))
	}
	tiles[0].Title.Text = title + "\n" + tiles[0].Title.Text
	grid := chart.Pairs(tiles)
	return chart.Save(grid, chart.Width, chart.Height*vg.Length(len(grid))*0.8, base)
}

// categoryColors are the colours of the filesystem write categories, in order.
var categoryColors = []color.Color{chart.Sky, chart.Green, chart.Vermilion, chart.Purple, chart.Yellow}

// Bytes draws physical bytes written per category, stacked, per cell group and
// variant, with the logical bytes committed marked on each bar.
func Bytes(g *judge.Grid, colNames []string, base string) error {
	byUnit := map[string]*judge.GridTable{}
	for _, t := range g.Tables {
		byUnit[t.Unit] = t
	}
	var cats []struct {
		unit string
		c    color.Color
	}
	for i, c := range contract.FSCategories {
		cats = append(cats, struct {
			unit string
			c    color.Color
		}{contract.FSUnit(c), categoryColors[i%len(categoryColors)]})
	}
	logical := byUnit[contract.UnitLogicalPerOp]
	first := byUnit[cats[0].unit]
	if first == nil {
		return fmt.Errorf("plot %s: no bytes by category in the results", filepath.Base(base))
	}
	var rowNames []string
	for _, r := range first.Rows {
		rowNames = append(rowNames, r.StringValues())
	}
	groupLabels := chart.RowLabels(rowNames)
	n := len(first.Cols)
	// One bar per (row, column), a gap between rows.
	var labels []string
	pos := func(i, j int) int { return i*(n+1) + j }
	for i := range first.Rows {
		for j := range first.Cols {
			labels = append(labels, groupLabels[i]+"\n"+colNames[j])
		}
		labels = append(labels, "")
	}
	p := chart.New("Bytes written per job by category (medians; lower is better), logical bytes marked", "", "bytes written per job (lower is better)")
	p.Y.Tick.Marker = chart.Ticks{Unit: "B"}
	var below *plotter.BarChart
	for _, cat := range cats {
		t := byUnit[cat.unit]
		if t == nil {
			continue
		}
		vals := make(plotter.Values, len(labels))
		for i, row := range first.Rows {
			for j, col := range first.Cols {
				if c := t.Cells[judge.GridKey{Row: row, Col: col}]; c != nil {
					vals[pos(i, j)] = c.Summary.Center
				}
			}
		}
		bars, err := plotter.NewBarChart(vals, vg.Points(math.Min(40, 400/float64(len(labels)))))
		if err != nil {
			return err
		}
		bars.Color, bars.LineStyle.Width = cat.c, 0
		if below != nil {
			bars.StackOn(below)
		}
		below = bars
		p.Add(bars)
		p.Legend.Add(strings.TrimSuffix(strings.TrimPrefix(cat.unit, "fs-"), "-B/op"), bars)
	}
	if logical != nil {
		var pts plotter.XYs
		for i, row := range first.Rows {
			for j, col := range first.Cols {
				if c := logical.Cells[judge.GridKey{Row: row, Col: col}]; c != nil {
					pts = append(pts, plotter.XY{X: float64(pos(i, j)), Y: c.Summary.Center})
				}
			}
		}
		if len(pts) > 0 {
			s, err := plotter.NewScatter(pts)
			if err != nil {
				return err
			}
			s.GlyphStyle = draw.GlyphStyle{Color: chart.Black, Radius: vg.Points(5), Shape: draw.PyramidGlyph{}}
			p.Add(s)
			p.Legend.Add("logical bytes, state included (write-amp leaves state out)", s)
		}
	}
	p.NominalX(labels...)
	p.Y.Min = 0
	chart.Headroom(p, 7)
	return chart.Save([][]*plot.Plot{{p}}, chart.Width, chart.Height, base)
}

// Deltas draws, per judged metric, each cell's change head vs base with a
// 95 % interval (paired: Hodges–Lehmann; unpaired: from the medians' intervals), coloured by status,
// and the metric's threshold lines.
func Deltas(v *judge.Verdict, base string) error {
	byUnit := map[string][]judge.Finding{}
	var units []string
	for _, f := range v.Findings {
		if f.Status == judge.NotJudged {
			continue
		}
		if _, ok := byUnit[f.Unit]; !ok {
			units = append(units, f.Unit)
		}
		byUnit[f.Unit] = append(byUnit[f.Unit], f)
	}
	if len(units) == 0 {
		return fmt.Errorf("plot %s: no judged metric to draw", filepath.Base(base))
	}
	var tiles [][]*plot.Plot
	for _, u := range units {
		fs := byUnit[u]
		p := chart.New(fmt.Sprintf("%s: head vs base (%s)", u, chart.Better(fs[0].Better)), "", "change from base")
		p.Y.Tick.Marker = chart.Ticks{Unit: "%"}
		var names []string
		for _, f := range fs {
			names = append(names, f.Cell)
		}
		labels := chart.RowLabels(names)
		statusColor := map[judge.Status]color.Color{judge.Regression: chart.Vermilion, judge.Improvement: chart.Green, judge.Unconfirmed: chart.Purple, judge.Inconclusive: chart.Yellow, judge.NoRegression: chart.Grey}
		seen := map[judge.Status]bool{}
		lo, hi := -100*fs[0].Threshold, 100*fs[0].Threshold
		for i, f := range fs {
			y := 100 * f.Delta
			pt := chart.ErrorPoints{{X: float64(i), Y: y}}
			if f.Lo != nil && f.Hi != nil {
				pt[0].Lo = y - 100**f.Lo
				pt[0].Hi = 100**f.Hi - y
			}
			lo, hi = math.Min(lo, y-pt[0].Lo), math.Max(hi, y+pt[0].Hi)
			s, err := plotter.NewScatter(pt)
			if err != nil {
				return err
			}
			s.GlyphStyle = draw.GlyphStyle{Color: statusColor[f.Status], Radius: vg.Points(4), Shape: draw.CircleGlyph{}}
			eb, err := plotter.NewYErrorBars(pt)
			if err != nil {
				return err
			}
			eb.Color = statusColor[f.Status]
			p.Add(eb, s)
			if !seen[f.Status] {
				seen[f.Status] = true
				p.Legend.Add(f.Status.String(), s)
			}
		}
		for _, sign := range []float64{-1, 1} {
			th := sign * 100 * fs[0].Threshold
			l, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: th}, {X: float64(len(fs)) - 0.5, Y: th}})
			if err != nil {
				return err
			}
			l.Color, l.Dashes = chart.Black, []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(l)
			if sign > 0 {
				p.Legend.Add(fmt.Sprintf("threshold ±%g%%", 100*fs[0].Threshold), l)
			}
		}
		p.NominalX(labels...)
		p.X.Min, p.X.Max = -0.5, float64(len(fs))-0.5
		p.Y.Min, p.Y.Max = lo-0.1*(hi-lo), hi+0.1*(hi-lo)
		chart.Headroom(p, 3)
		tiles = append(tiles, []*plot.Plot{p})
	}
	return chart.Save(tiles, chart.Width, chart.Height*0.7*vg.Length(len(tiles)), base)
}
