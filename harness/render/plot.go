package render

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"golang.org/x/perf/benchfmt"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/jobtrace"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/internal/files"
)

// The Okabe–Ito palette, safe for colour-blind readers. A variant keeps its colour
// in every plot: off and base blue, on and head orange.
var (
	colorBlue      = color.RGBA{0x00, 0x72, 0xB2, 0xFF}
	colorOrange    = color.RGBA{0xE6, 0x9F, 0x00, 0xFF}
	colorSky       = color.RGBA{0x56, 0xB4, 0xE9, 0xFF}
	colorGreen     = color.RGBA{0x00, 0x9E, 0x73, 0xFF}
	colorVermilion = color.RGBA{0xD5, 0x5E, 0x00, 0xFF}
	colorPurple    = color.RGBA{0xCC, 0x79, 0xA7, 0xFF}
	colorYellow    = color.RGBA{0xF0, 0xE4, 0x42, 0xFF}
	colorGrey      = color.RGBA{0x88, 0x88, 0x88, 0xFF}
	colorBlack     = color.RGBA{0x00, 0x00, 0x00, 0xFF}
)

// categoryColors are the colours of the filesystem write categories, in order.
var categoryColors = []color.Color{colorSky, colorGreen, colorVermilion, colorPurple, colorYellow}

// keyUnits are the metrics the variant and trend plots show, those present.
var keyUnits = []string{contract.UnitSteadyRows, contract.Tidy(contract.UnitSteadyCPU), contract.UnitBarrierP99, contract.UnitWriteAmp,
	contract.UnitRowsPerSec, contract.Tidy(contract.UnitCPUPerRow), contract.UnitPersistBytes}

// variantColor is the colour of the i-th variant (off/base, on/head, then others).
func variantColor(i int) color.Color {
	return []color.Color{colorBlue, colorOrange, colorGreen, colorPurple, colorSky, colorVermilion}[i%6]
}

// Plot sizes: 800 px wide at 96 dpi.
const (
	plotWidth  = 600 * vg.Length(1) // points
	plotHeight = 375 * vg.Length(1)
	plotDPI    = 96
)

// savePlots draws a grid of plots on one page and writes base.png and base.svg.
func savePlots(plots [][]*plot.Plot, w, h vg.Length, base string) error {
	rows, cols := len(plots), len(plots[0])
	for _, format := range []string{"png", "svg"} {
		var c vg.CanvasWriterTo
		if format == "png" {
			c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(plotDPI))}
		} else {
			c = vgsvg.New(w, h)
		}
		dc := draw.New(c)
		tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: 6 * vg.Millimeter, PadY: 6 * vg.Millimeter,
			PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
		canvases := plot.Align(plots, tiles, dc)
		for i := range plots {
			for j := range plots[i] {
				if plots[i][j] != nil {
					plots[i][j].Draw(canvases[i][j])
				}
			}
		}
		var buf bytes.Buffer
		if _, err := c.WriteTo(&buf); err != nil {
			return fmt.Errorf("plot %s.%s: %w", base, format, err)
		}
		if err := files.WriteAtomic(base+"."+format, buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Legend.Top = true
	return p
}

// headroom leaves the top of the plot to the legend, so it covers no data: a
// fifth of it, and more for legends of many entries.
func headroom(p *plot.Plot, entries int) {
	p.Y.Max += max(0.25, 0.08*float64(entries)) * (p.Y.Max - math.Min(p.Y.Min, 0))
}

// unitLabel is a metric's axis label: the unit and its better direction.
func unitLabel(unit string, better int) string {
	return fmt.Sprintf("%s (%s is better)", unit, map[int]string{1: "higher", -1: "lower", 0: "?"}[better])
}

// rowLabels shortens grid rows to the name keys that differ between them.
func rowLabels(rows []string) []string {
	split := make([][]contract.Field, len(rows))
	counts := map[string]map[string]bool{}
	for i, r := range rows {
		split[i] = contract.Fields(contract.Label(r))
		for _, f := range split[i] {
			if counts[f.Dim] == nil {
				counts[f.Dim] = map[string]bool{}
			}
			counts[f.Dim][f.Value] = true
		}
	}
	out := make([]string, len(rows))
	for i, parts := range split {
		var keep []string
		for _, f := range parts {
			if len(counts[f.Dim]) > 1 {
				keep = append(keep, f.String())
			}
		}
		out[i] = strings.Join(keep, "\n")
		if out[i] == "" {
			out[i] = "all cells"
		}
	}
	return out
}

// barPlot is one metric of a grid as grouped bars: a group per row, a bar per
// column, whiskers for the 95 % confidence interval where n allows one.
func barPlot(t *judge.GridTable, colNames []string) (*plot.Plot, error) {
	p := newPlot(t.Unit, "", unitLabel(t.Unit, t.Better))
	var rowNames []string
	for _, r := range t.Rows {
		rowNames = append(rowNames, r.StringValues())
	}
	labels := rowLabels(rowNames)
	n := len(t.Cols)
	width := vg.Points(math.Min(40, 360/float64(len(t.Rows)*n)))
	noCI := false
	for j, col := range t.Cols {
		vals := make(plotter.Values, len(t.Rows))
		var whiskers errorPoints
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
			whiskers = append(whiskers, errorPoint{x, c.Summary.Center, c.Summary.Center - c.Summary.Lo, c.Summary.Hi - c.Summary.Center})
		}
		bars, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, err
		}
		bars.Color = variantColor(j)
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
	headroom(p, n)
	return p, nil
}

type errorPoint struct{ x, y, lo, hi float64 }

type errorPoints []errorPoint

func (e errorPoints) Len() int                        { return len(e) }
func (e errorPoints) XY(i int) (float64, float64)     { return e[i].x, e[i].y }
func (e errorPoints) YError(i int) (float64, float64) { return e[i].lo, e[i].hi }

// PlotVariants draws the key metrics as grouped bars per cell group, one bar per
// variant (persist off/on, or base/head), with 95 % CI whiskers.
func PlotVariants(g *judge.Grid, colNames []string, title, base string) error {
	want := keyUnits
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
	tiles[0].Title.Text = title + ": " + tiles[0].Title.Text
	for len(tiles)%2 != 0 {
		tiles = append(tiles, nil)
	}
	var grid [][]*plot.Plot
	for i := 0; i < len(tiles); i += 2 {
		grid = append(grid, tiles[i:i+2])
	}
	if grid[len(grid)-1][1] == nil {
		grid[len(grid)-1][1] = emptyPlot()
	}
	return savePlots(grid, plotWidth, plotHeight*vg.Length(len(grid))*0.8, base)
}

func emptyPlot() *plot.Plot {
	p := plot.New()
	p.HideAxes()
	return p
}

// VariantTraces are the traces of each variant, in variant order.
type VariantTraces struct {
	Names  []string
	Traces [][]jobtrace.Trace
}

// PlotBarrierCDF draws the distribution of every barrier's latency of every run,
// one line per variant, on a log latency axis, with p50 and p99 marked.
func PlotBarrierCDF(vt VariantTraces, base string) error {
	p := newPlot("Barrier latency, every barrier of every run", "barrier latency (s, log scale)", "fraction of barriers ≤ latency")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	any := false
	lo, hi := math.Inf(1), 0.0
	for i, traces := range vt.Traces {
		var lat []float64
		for _, t := range traces {
			for _, e := range t.Epochs {
				if e.LatencySec > 0 {
					lat = append(lat, e.LatencySec)
				}
			}
		}
		if len(lat) == 0 {
			continue
		}
		any = true
		sort.Float64s(lat)
		lo, hi = math.Min(lo, lat[0]), math.Max(hi, lat[len(lat)-1])
		xys := make(plotter.XYs, len(lat))
		for k, l := range lat {
			xys[k] = plotter.XY{X: l, Y: float64(k+1) / float64(len(lat))}
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		line.Color, line.Width = variantColor(i), vg.Points(1.5)
		p.Add(line)
		p50, p99 := contract.Quantile(lat, 0.50), contract.Quantile(lat, 0.99)
		marks, err := plotter.NewScatter(plotter.XYs{{X: p50, Y: 0.50}, {X: p99, Y: 0.99}})
		if err != nil {
			return err
		}
		marks.GlyphStyle = draw.GlyphStyle{Color: variantColor(i), Radius: vg.Points(4), Shape: draw.CircleGlyph{}}
		p.Add(marks)
		p.Legend.Add(fmt.Sprintf("%s: p50 %s, p99 %s (n=%d)", vt.Names[i], fmtSec(p50), fmtSec(p99), len(lat)), line, marks)
	}
	if !any {
		return fmt.Errorf("plot %s: no barriers in the traces", filepath.Base(base))
	}
	p.Y.Min, p.Y.Max = 0, 1.3
	// Explicit, and never empty: the log axis must stay above zero.
	p.X.Min, p.X.Max = lo/1.5, hi*1.5
	p.Legend.Left = true
	return savePlots([][]*plot.Plot{{p}}, plotWidth, plotHeight, base)
}

func fmtSec(s float64) string {
	switch {
	case s < 1e-3:
		return fmt.Sprintf("%.0fµs", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.1fms", s*1e3)
	}
	return fmt.Sprintf("%.2fs", s)
}

// representative picks the run whose wall time is the median of the traces.
func representative(traces []jobtrace.Trace) (jobtrace.Trace, bool) {
	if len(traces) == 0 {
		return jobtrace.Trace{}, false
	}
	ts := append([]jobtrace.Trace(nil), traces...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].WallSec < ts[j].WallSec })
	return ts[len(ts)/2], true
}

// PlotTimeline draws one run over time: rows per epoch (snapshot and upstream) and
// each barrier's latency, with the end of the snapshot marked.
func PlotTimeline(t jobtrace.Trace, base string) error {
	if len(t.Epochs) == 0 {
		return fmt.Errorf("plot %s: the run has no epochs", filepath.Base(base))
	}
	rows := newPlot("One run over time: "+strings.ReplaceAll(t.Cell, "/", " "), "", "rows in the epoch")
	lat := newPlot("", "time since the first barrier (s)", "barrier latency (s)")
	rows.Title.TextStyle.Font.Size = vg.Points(9)
	snap, up, latency := make(plotter.XYs, len(t.Epochs)), make(plotter.XYs, len(t.Epochs)), make(plotter.XYs, len(t.Epochs))
	finish := -1.0
	for i, e := range t.Epochs {
		snap[i] = plotter.XY{X: e.AtSec, Y: float64(e.SnapshotRows)}
		up[i] = plotter.XY{X: e.AtSec, Y: float64(e.UpstreamRows)}
		latency[i] = plotter.XY{X: e.AtSec, Y: e.LatencySec}
		if e.SnapshotRows > 0 {
			finish = e.AtSec
		}
	}
	for _, s := range []struct {
		name string
		xys  plotter.XYs
		c    color.Color
		p    *plot.Plot
	}{{"snapshot rows", snap, colorBlue, rows}, {"upstream rows", up, colorOrange, rows}, {"barrier latency", latency, colorBlack, lat}} {
		l, pts, err := plotter.NewLinePoints(s.xys)
		if err != nil {
			return err
		}
		l.Color, pts.Color = s.c, s.c
		pts.Radius = vg.Points(2)
		s.p.Add(l, pts)
		s.p.Legend.Add(s.name, l, pts)
	}
	for _, p := range []*plot.Plot{rows, lat} {
		p.Y.Min = 0
		headroom(p, 3)
		if finish >= 0 {
			mark, err := plotter.NewLine(plotter.XYs{{X: finish, Y: p.Y.Min}, {X: finish, Y: p.Y.Max}})
			if err != nil {
				return err
			}
			mark.Color, mark.Dashes = colorGrey, []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(mark)
			if p == rows {
				p.Legend.Add("last snapshot epoch; then upstream only", mark)
			}
		}
	}
	panels := [][]*plot.Plot{{rows}, {lat}}
	for _, panel := range []func(jobtrace.Trace) (*plot.Plot, error){phasePlot, lsmPlot} {
		p, err := panel(t)
		if err != nil {
			return err
		}
		if p != nil { // traces of older bench binaries lack some panels' data
			panels[len(panels)-1][0].X.Label.Text = ""
			panels = append(panels, []*plot.Plot{p})
		}
	}
	return savePlots(panels, plotWidth, plotHeight*vg.Length(0.7*float64(len(panels))), base)
}

// lsmPlot draws the LSM's shape after each epoch and the epoch's write stalls, so
// a slowdown shows whether L0, queued memtables or stalls came with it; nil when
// the trace has no LSM data (an older bench binary).
func lsmPlot(t jobtrace.Trace) (*plot.Plot, error) {
	if len(t.Epochs) == 0 || t.Epochs[0].LSM == nil {
		return nil, nil
	}
	p := newPlot("", "time since the first barrier (s)", "LSM after the epoch")
	for _, s := range []struct {
		label string
		c     color.Color
		of    func(*jobtrace.TraceLSM) float64
	}{
		{"L0 files", colorBlue, func(l *jobtrace.TraceLSM) float64 { return float64(l.L0Files) }},
		{"L0 sublevels", colorSky, func(l *jobtrace.TraceLSM) float64 { return float64(l.L0Sublevels) }},
		{"memtables (mutable + queued)", colorGreen, func(l *jobtrace.TraceLSM) float64 { return float64(l.Memtables) }},
		{"read amplification", colorPurple, func(l *jobtrace.TraceLSM) float64 { return float64(l.ReadAmp) }},
		{"write stalls in the epoch", colorVermilion, func(l *jobtrace.TraceLSM) float64 { return float64(l.Stalls) }},
	} {
		xys := make(plotter.XYs, 0, len(t.Epochs))
		for _, e := range t.Epochs {
			if e.LSM != nil {
				xys = append(xys, plotter.XY{X: e.AtSec, Y: s.of(e.LSM)})
			}
		}
		if err := addLine(p, xys, s.c, s.label); err != nil {
			return nil, err
		}
	}
	p.Y.Min = 0
	headroom(p, 5)
	return p, nil
}

// addLine draws one series of a timeline panel, with its legend entry.
func addLine(p *plot.Plot, xys plotter.XYs, c color.Color, label string) error {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	l.Color, l.Width = c, vg.Points(1.2)
	p.Add(l)
	p.Legend.Add(label, l)
	return nil
}

// timelinePhases are the phases of an epoch the timeline draws, in trace names.
var timelinePhases = []struct {
	name, label string
	c           color.Color
}{
	{"scan", "actors scanning", colorBlue},
	{"open", "actors reopening the scan", colorSky},
	{"wait", "actors waiting for the commit", colorVermilion}, // bench binaries whose scan waited for each commit
	{"idle", "actors idle, their rows read", colorYellow},
	{"barrier", "actors handling the barrier", colorPurple},
	{"commit", "collector committing", colorBlack},
	{"build", "collector building the batch", colorGreen},
	{"upload", "checkpoint uploading (in the background)", colorOrange}, // object stores
}

// phasePlot draws where each epoch's time went, seconds per phase (the actors'
// summed over actors); nil when the trace has no phases (an older bench binary).
func phasePlot(t jobtrace.Trace) (*plot.Plot, error) {
	if len(t.Epochs) == 0 || t.Epochs[0].Phases == nil {
		return nil, nil
	}
	p := newPlot("", "time since the first barrier (s)", "seconds in the epoch")
	present := map[string]bool{}
	for _, e := range t.Epochs {
		for name := range e.Phases {
			present[name] = true
		}
	}
	for _, ph := range timelinePhases {
		if !present[ph.name] {
			continue // a phase the bench binary that wrote the trace does not have
		}
		xys := make(plotter.XYs, len(t.Epochs))
		for i, e := range t.Epochs {
			xys[i] = plotter.XY{X: e.AtSec, Y: e.Phases[ph.name]}
		}
		if err := addLine(p, xys, ph.c, ph.label); err != nil {
			return nil, err
		}
	}
	p.Y.Min = 0
	headroom(p, len(timelinePhases))
	return p, nil
}

// PlotBytes draws physical bytes written per category, stacked, per cell group and
// variant, with the logical bytes committed marked on each bar.
func PlotBytes(g *judge.Grid, colNames []string, base string) error {
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
	groupLabels := rowLabels(rowNames)
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
	p := newPlot("Bytes written by category (medians), logical bytes marked", "", "MiB per job")
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
					vals[pos(i, j)] = c.Summary.Center / (1 << 20)
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
					pts = append(pts, plotter.XY{X: float64(pos(i, j)), Y: c.Summary.Center / (1 << 20)})
				}
			}
		}
		if len(pts) > 0 {
			s, err := plotter.NewScatter(pts)
			if err != nil {
				return err
			}
			s.GlyphStyle = draw.GlyphStyle{Color: colorBlack, Radius: vg.Points(5), Shape: draw.PyramidGlyph{}}
			p.Add(s)
			p.Legend.Add("logical bytes, state included (write-amp leaves state out)", s)
		}
	}
	p.NominalX(labels...)
	p.Y.Min = 0
	headroom(p, 7)
	return savePlots([][]*plot.Plot{{p}}, plotWidth, plotHeight, base)
}

// PlotDeltas draws, per judged metric, each cell's change head vs base with a
// 95 % interval (paired: Hodges–Lehmann; unpaired: from the medians' intervals), coloured by status,
// and the metric's threshold lines.
func PlotDeltas(v *judge.Verdict, base string) error {
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
		p := newPlot(fmt.Sprintf("%s: head vs base (%s)", u, map[int]string{1: "higher is better", -1: "lower is better", 0: ""}[fs[0].Better]), "", "change (%)")
		var names []string
		for _, f := range fs {
			names = append(names, f.Cell)
		}
		labels := rowLabels(names)
		statusColor := map[judge.Status]color.Color{judge.Regression: colorVermilion, judge.Improvement: colorGreen, judge.Unconfirmed: colorPurple, judge.Inconclusive: colorYellow, judge.NoRegression: colorGrey}
		seen := map[judge.Status]bool{}
		lo, hi := -100*fs[0].Threshold, 100*fs[0].Threshold
		for i, f := range fs {
			y := 100 * f.Delta
			pt := errorPoints{{x: float64(i), y: y}}
			if f.Lo != nil && f.Hi != nil {
				pt[0].lo = y - 100**f.Lo
				pt[0].hi = 100**f.Hi - y
			}
			lo, hi = math.Min(lo, y-pt[0].lo), math.Max(hi, y+pt[0].hi)
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
			l.Color, l.Dashes = colorBlack, []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(l)
			if sign > 0 {
				p.Legend.Add(fmt.Sprintf("threshold ±%g%%", 100*fs[0].Threshold), l)
			}
		}
		p.NominalX(labels...)
		p.X.Min, p.X.Max = -0.5, float64(len(fs))-0.5
		p.Y.Min, p.Y.Max = lo-0.1*(hi-lo), hi+0.1*(hi-lo)
		headroom(p, 3)
		tiles = append(tiles, []*plot.Plot{p})
	}
	return savePlots(tiles, plotWidth, plotHeight*0.7*vg.Length(len(tiles)), base)
}

// TrendPoint is one results file of a series: its label on the x axis and results.
type TrendPoint struct {
	Label   string // e.g. the date and short commit
	Results []*benchfmt.Result
	Units   benchfmt.UnitMetadataMap
}

// PlotTrends draws, per key metric, each cell's median over a series of results
// files (oldest first) with its 95 % confidence interval as a band, as the change
// from the cell's first point, so that cells of any level share one axis.
func PlotTrends(points []TrendPoint, title, base string) error {
	if len(points) == 0 {
		return errors.New("plot trends: no results files")
	}
	type series struct {
		first  float64
		xys    plotter.XYs
		lo, hi plotter.XYs
	}
	want := keyUnits
	data := map[string]map[string]*series{} // unit → cell → series
	better := map[string]int{}
	var cells []string
	for x, pt := range points {
		g, err := judge.NewGrid(judge.GridConfig{Col: ".file", Ignore: contract.CompareIgnore}, pt.Results, pt.Units)
		if err != nil {
			return err
		}
		for _, t := range g.Tables {
			if !slices.Contains(want, t.Unit) {
				continue
			}
			better[t.Unit] = t.Better
			if data[t.Unit] == nil {
				data[t.Unit] = map[string]*series{}
			}
			for _, row := range t.Rows {
				for _, col := range t.Cols {
					c := t.Cells[judge.GridKey{Row: row, Col: col}]
					if c == nil {
						continue
					}
					name := row.StringValues()
					s := data[t.Unit][name]
					if s == nil {
						if c.Summary.Center == 0 {
							continue // no level to measure change from
						}
						s = &series{first: c.Summary.Center}
						data[t.Unit][name] = s
						if !slices.Contains(cells, name) {
							cells = append(cells, name)
						}
					}
					rel := func(v float64) float64 { return 100 * (v/s.first - 1) }
					s.xys = append(s.xys, plotter.XY{X: float64(x), Y: rel(c.Summary.Center)})
					if !math.IsInf(c.Summary.Lo, 0) && !math.IsInf(c.Summary.Hi, 0) {
						s.lo = append(s.lo, plotter.XY{X: float64(x), Y: rel(c.Summary.Lo)})
						s.hi = append(s.hi, plotter.XY{X: float64(x), Y: rel(c.Summary.Hi)})
					}
				}
			}
		}
	}
	labels := rowLabels(cells)
	var labelsX []string
	for _, pt := range points {
		labelsX = append(labelsX, pt.Label)
	}
	var tiles [][]*plot.Plot
	for _, unit := range want {
		byCell := data[unit]
		if byCell == nil {
			continue
		}
		p := newPlot(fmt.Sprintf("%s%s: change from each cell's first night (median, 95 %% CI band)", title, unit), "", "% ("+map[int]string{1: "higher", -1: "lower", 0: "?"}[better[unit]]+" is better)")
		for i, cell := range cells {
			s := byCell[cell]
			if s == nil {
				continue
			}
			c := variantColor(i)
			if len(s.lo) > 1 {
				band := append(append(plotter.XYs{}, s.lo...), reversed(s.hi)...)
				poly, err := plotter.NewPolygon(band)
				if err != nil {
					return err
				}
				r, g, b, _ := c.RGBA()
				poly.Color = color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 0x30}
				poly.LineStyle.Width = 0
				p.Add(poly)
			}
			l, pts, err := plotter.NewLinePoints(s.xys)
			if err != nil {
				return err
			}
			l.Color, pts.Color, pts.Radius = c, c, vg.Points(2.5)
			if i >= 6 { // the palette repeats: tell the lines apart by dashes too
				l.Dashes = []vg.Length{vg.Points(5), vg.Points(2)}
			}
			p.Add(l, pts)
			p.Legend.Add(strings.ReplaceAll(labels[i], "\n", " "), l, pts)
		}
		p.NominalX(labelsX...)
		p.X.Min, p.X.Max = -0.5, float64(len(points))-0.5
		headroom(p, len(cells))
		tiles = append(tiles, []*plot.Plot{p})
	}
	if len(tiles) == 0 {
		return fmt.Errorf("plot trends: none of %s in the results", strings.Join(want, ", "))
	}
	return savePlots(tiles, plotWidth, plotHeight*0.75*vg.Length(len(tiles)), base)
}

func reversed(xys plotter.XYs) plotter.XYs {
	out := make(plotter.XYs, len(xys))
	for i, xy := range xys {
		out[len(xys)-1-i] = xy
	}
	return out
}
