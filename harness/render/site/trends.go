// Package site draws trend series (harness/trend): the nightly report's trend
// plots and the static site's pages, both through render/chart.
package site

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/backfill-bench/backfill-bench/harness/render/chart"
	"github.com/backfill-bench/backfill-bench/harness/trend"
)

// PlotTrends draws, per key metric (chart.KeyUnits), each cell's median over the
// files (labels names them on the x axis, oldest first) with its 95 % confidence
// interval as a band, as the change from the cell's first point, so that cells of
// any level share one axis. It writes base.png and base.svg.
func PlotTrends(series []trend.Series, labels []string, title, base string) error {
	var cells []string
	for _, s := range series {
		if !slices.Contains(cells, s.Cell) {
			cells = append(cells, s.Cell)
		}
	}
	short := chart.RowLabels(cells)
	var tiles [][]*plot.Plot
	for _, unit := range chart.KeyUnits {
		var p *plot.Plot
		for _, s := range series {
			if s.Unit != unit || len(s.Points) == 0 || s.Points[0].Median == 0 {
				continue // no level to measure change from
			}
			if p == nil {
				p = chart.New(fmt.Sprintf("%s%s: change from each cell's first night (%s; median, 95 %% CI band)", title, unit, chart.Better(s.Better)), "",
					"change from the first night ("+chart.Better(s.Better)+")")
				p.Y.Tick.Marker = chart.Ticks{Unit: "%"}
			}
			i := slices.Index(cells, s.Cell)
			if err := addTrend(p, s, i, strings.ReplaceAll(short[i], "\n", " ")); err != nil {
				return err
			}
		}
		if p == nil {
			continue
		}
		p.NominalX(labels...)
		p.X.Min, p.X.Max = -0.5, float64(len(labels))-0.5
		chart.Headroom(p, len(cells))
		tiles = append(tiles, []*plot.Plot{p})
	}
	if len(tiles) == 0 {
		return fmt.Errorf("plot trends: none of %s in the results", strings.Join(chart.KeyUnits, ", "))
	}
	return chart.Save(tiles, chart.Width, chart.Height*0.75*vg.Length(len(tiles)), base)
}

// addTrend draws one cell's series relative to its first point: the line and,
// where the points have intervals, the band.
func addTrend(p *plot.Plot, s trend.Series, i int, label string) error {
	first := s.Points[0].Median
	rel := func(v float64) float64 { return 100 * (v/first - 1) }
	var xys, lo, hi plotter.XYs
	for _, pt := range s.Points {
		x := float64(pt.File)
		xys = append(xys, plotter.XY{X: x, Y: rel(pt.Median)})
		if !math.IsInf(pt.Lo, 0) && !math.IsInf(pt.Hi, 0) {
			lo = append(lo, plotter.XY{X: x, Y: rel(pt.Lo)})
			hi = append(hi, plotter.XY{X: x, Y: rel(pt.Hi)})
		}
	}
	c := chart.Variant(i)
	if len(lo) > 1 {
		slices.Reverse(hi)
		poly, err := plotter.NewPolygon(append(lo, hi...))
		if err != nil {
			return err
		}
		poly.Color, poly.LineStyle.Width = chart.Translucent(c), 0
		p.Add(poly)
	}
	l, pts, err := plotter.NewLinePoints(xys)
	if err != nil {
		return err
	}
	l.Color, pts.Color, pts.Radius = c, c, vg.Points(2.5)
	if i >= 6 { // the palette repeats: tell the lines apart by dashes too
		l.Dashes = []vg.Length{vg.Points(5), vg.Points(2)}
	}
	p.Add(l, pts)
	p.Legend.Add(label, l, pts)
	return nil
}
