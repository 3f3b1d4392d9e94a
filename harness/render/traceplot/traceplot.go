// Package traceplot draws runs' traces: the distribution of barrier latencies and
// one run over time.
package traceplot

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/jobtrace"
	"github.com/backfill-bench/backfill-bench/harness/render/chart"
)

// Variants are the traces of each variant, in variant order.
type Variants struct {
	Names  []string
	Traces [][]jobtrace.Trace
}

// BarrierCDF draws the distribution of every barrier's latency of every run,
// one line per variant, on a log latency axis, with p50 and p99 marked.
func BarrierCDF(vt Variants, base string) error {
	p := chart.New("Barrier latency of every barrier of every run (left is better)", "barrier latency (log scale)", "share of barriers ≤ latency")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = chart.Ticks{Unit: "s", Log: true}
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
		line.Color, line.Width = chart.Variant(i), vg.Points(1.5)
		p.Add(line)
		p50, p99 := contract.Quantile(lat, 0.50), contract.Quantile(lat, 0.99)
		marks, err := plotter.NewScatter(plotter.XYs{{X: p50, Y: 0.50}, {X: p99, Y: 0.99}})
		if err != nil {
			return err
		}
		marks.GlyphStyle = draw.GlyphStyle{Color: chart.Variant(i), Radius: vg.Points(4), Shape: draw.CircleGlyph{}}
		p.Add(marks)
		p.Legend.Add(fmt.Sprintf("%s: p50 %s, p99 %s (n=%d)", vt.Names[i], chart.Format(p50, "s"), chart.Format(p99, "s"), len(lat)), line, marks)
	}
	if !any {
		return fmt.Errorf("plot %s: no barriers in the traces", filepath.Base(base))
	}
	p.Y.Min, p.Y.Max = 0, 1.3
	p.Y.Tick.Marker = plot.ConstantTicks{{Value: 0, Label: "0 %"}, {Value: 0.25, Label: "25 %"}, {Value: 0.5, Label: "50 %"}, {Value: 0.75, Label: "75 %"}, {Value: 1, Label: "100 %"}}
	// Explicit, and never empty: the log axis must stay above zero.
	p.X.Min, p.X.Max = lo/1.5, hi*1.5
	p.Legend.Left = true
	return chart.Save([][]*plot.Plot{{p}}, chart.Width, chart.Height, base)
}

// Representative picks the run whose wall time is the median of the traces (none:
// the zero trace, which Timeline refuses).
func Representative(traces []jobtrace.Trace) jobtrace.Trace {
	if len(traces) == 0 {
		return jobtrace.Trace{}
	}
	ts := append([]jobtrace.Trace(nil), traces...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].WallSec < ts[j].WallSec })
	return ts[len(ts)/2]
}

// Timeline draws one run over time: rows per epoch (snapshot and upstream) and
// each barrier's latency, with the end of the snapshot marked.
func Timeline(t jobtrace.Trace, base string) error {
	if len(t.Epochs) == 0 {
		return fmt.Errorf("plot %s: the run has no epochs", filepath.Base(base))
	}
	rows := chart.New("One run over time: "+strings.ReplaceAll(t.Cell, "/", " "), "", "rows in the epoch")
	rows.Y.Tick.Marker = chart.Ticks{Unit: "rows"}
	lat := chart.New("", timeAxis, "barrier latency (lower is better)")
	lat.Y.Tick.Marker = chart.Ticks{Unit: "s"}
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
	}{{"snapshot rows", snap, chart.Blue, rows}, {"upstream rows", up, chart.Orange, rows}, {"barrier latency", latency, chart.Black, lat}} {
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
		chart.Headroom(p, 3)
		if finish >= 0 {
			mark, err := plotter.NewLine(plotter.XYs{{X: finish, Y: p.Y.Min}, {X: finish, Y: p.Y.Max}})
			if err != nil {
				return err
			}
			mark.Color, mark.Dashes = chart.Grey, []vg.Length{vg.Points(4), vg.Points(3)}
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
	for _, row := range panels {
		row[0].X.Tick.Marker = chart.Ticks{Unit: "s"}
	}
	return chart.Save(panels, chart.Width, chart.Height*vg.Length(0.7*float64(len(panels))), base)
}

// timeAxis is the x axis of the timeline's panels.
const timeAxis = "time since the first barrier"

// lsmPlot draws the LSM's shape after each epoch and the epoch's write stalls, so
// a slowdown shows whether L0, queued memtables or stalls came with it; nil when
// the trace has no LSM data (an older bench binary).
func lsmPlot(t jobtrace.Trace) (*plot.Plot, error) {
	if len(t.Epochs) == 0 || t.Epochs[0].LSM == nil {
		return nil, nil
	}
	p := chart.New("", timeAxis, "LSM after the epoch (count)")
	for _, s := range []struct {
		label string
		c     color.Color
		of    func(*jobtrace.TraceLSM) float64
	}{
		{"L0 files", chart.Blue, func(l *jobtrace.TraceLSM) float64 { return float64(l.L0Files) }},
		{"L0 sublevels", chart.Sky, func(l *jobtrace.TraceLSM) float64 { return float64(l.L0Sublevels) }},
		{"memtables (mutable + queued)", chart.Green, func(l *jobtrace.TraceLSM) float64 { return float64(l.Memtables) }},
		{"read amplification", chart.Purple, func(l *jobtrace.TraceLSM) float64 { return float64(l.ReadAmp) }},
		{"write stalls in the epoch", chart.Vermilion, func(l *jobtrace.TraceLSM) float64 { return float64(l.Stalls) }},
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
	chart.Headroom(p, 5)
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
	{"scan", "actors scanning", chart.Blue},
	{"open", "actors reopening the scan", chart.Sky},
	{"wait", "actors waiting for the commit", chart.Vermilion}, // bench binaries whose scan waited for each commit
	{"idle", "actors idle, their rows read", chart.Yellow},
	{"barrier", "actors handling the barrier", chart.Purple},
	{"commit", "collector committing", chart.Black},
	{"build", "collector building the batch", chart.Green},
	{"upload", "checkpoint uploading (in the background)", chart.Orange}, // object stores
}

// phasePlot draws where each epoch's time went, seconds per phase (the actors'
// summed over actors); nil when the trace has no phases (an older bench binary).
func phasePlot(t jobtrace.Trace) (*plot.Plot, error) {
	if len(t.Epochs) == 0 || t.Epochs[0].Phases == nil {
		return nil, nil
	}
	p := chart.New("", timeAxis, "time in the epoch, per phase")
	p.Y.Tick.Marker = chart.Ticks{Unit: "s"}
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
	chart.Headroom(p, len(timelinePhases))
	return p, nil
}
