package site

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/backfill-bench/backfill-bench/harness/render/chart"
	"github.com/backfill-bench/backfill-bench/harness/trend"
)

// Page is one profile's page of a machine's nightly history.
type Page struct {
	Machine, Profile string
	Index            string // link back to the index
	Nights           []Night
	Cells            []Cell
}

// Night is one night: its name, commit, and links to its report and commit
// ("" when unknown).
type Night struct {
	Name, Commit, CommitTime string
	Report, CommitLink       string
}

// Cell is one cell's charts, one per judged metric.
type Cell struct {
	Name, Anchor string
	Charts       []Chart
}

// Chart is one metric of a cell over the nights: a point's File is its night's
// index in Page.Nights.
type Chart struct {
	Series       trend.Series
	ChangePoints []Change
}

// Change is a change point: the first night after the change, and the change.
type Change struct {
	Night int
	Delta float64
	Worse bool
}

// The chart's size, in points (one SVG user unit each).
const chartW, chartH = 640.0, 200.0

// laidChart is a chart drawn by gonum/plot, with the points and change points
// laid over it as links and tooltips.
type laidChart struct {
	Unit    string
	Body    template.HTML // gonum/plot's SVG drawing, without its <svg> element
	Points  []laidPoint
	Changes []laidChange
	W, H    float64
}

type laidPoint struct {
	X, Y  float64
	Href  string
	Title string
}

type laidChange struct {
	X, Y1, Y2 float64
	Title     string
	Class     string
}

// layout draws a chart's axes (SI ticks in the metric's unit), its 95 % band and
// median line with gonum/plot, and places the points and change points over it:
// x by night over the page's nights, y over the range of the intervals.
func layout(c Chart, nights []Night) (out laidChart, err error) {
	defer func() {
		// gonum/plot panics on some degenerate ranges: an error names the chart.
		if r := recover(); r != nil {
			err = fmt.Errorf("site: chart %s %s: %v", c.Series.Cell, c.Series.Unit, r)
		}
	}()
	s := c.Series
	p, pts, noCI, err := trendPlot(s, nights)
	if err != nil {
		return out, err
	}
	w, h := vg.Points(chartW), vg.Points(chartH)
	canvas := vgsvg.New(w, h)
	dc := draw.New(canvas)
	p.Draw(dc)
	da := p.DataCanvas(dc)
	trX, trY := p.Transforms(&da)
	x := func(v float64) float64 { return trX(v).Points() }
	y := func(v float64) float64 { return chartH - trY(v).Points() }
	var svg bytes.Buffer
	if _, err := canvas.WriteTo(&svg); err != nil {
		return out, err
	}
	body := svg.String()
	const open = `xmlns:xlink="http://www.w3.org/1999/xlink">`
	if i, j := strings.Index(body, open), strings.LastIndex(body, "</svg>"); i >= 0 && j > i {
		body = body[i+len(open) : j]
	}
	out = laidChart{Unit: s.Unit, Body: template.HTML(body), W: chartW, H: chartH} // gonum/plot escapes its text
	for i, pt := range pts {
		n := nights[pt.File]
		ci := fmt.Sprintf("[%s, %s]", formatValue(pt.Lo, s.Unit), formatValue(pt.Hi, s.Unit))
		if noCI[i] {
			ci = "(too few runs for a 95 % interval)"
		}
		title := fmt.Sprintf("%s, commit %s: %s %s", n.Name, n.Commit, formatValue(pt.Median, s.Unit), ci)
		if n.CommitLink != "" {
			// A tooltip cannot hold a link: it gives the URL, the nights table links it.
			title += "\ncommit: " + n.CommitLink
		}
		out.Points = append(out.Points, laidPoint{X: x(float64(pt.File)), Y: y(pt.Median), Href: n.Report, Title: title})
	}
	for _, ch := range c.ChangePoints {
		class := "change-point better"
		if ch.Worse {
			class = "change-point worse"
		}
		out.Changes = append(out.Changes, laidChange{X: x(float64(ch.Night) - 0.5), Y1: y(p.Y.Max), Y2: y(p.Y.Min), Class: class,
			Title: fmt.Sprintf("change point: %+.1f %% from night %s", 100*ch.Delta, nights[ch.Night].Name)})
	}
	return out, nil
}

// trendPlot is a chart's plot: the band and the median line, the axes' ranges
// and ticks; and its points with their intervals, an infinite interval (noCI)
// narrowed to the median.
func trendPlot(s trend.Series, nights []Night) (p *plot.Plot, pts []trend.Point, noCI []bool, err error) {
	// A night of too few runs for an interval has an infinite one: its band
	// narrows to the median there.
	pts = make([]trend.Point, len(s.Points))
	noCI = make([]bool, len(pts))
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, p := range s.Points {
		pts[i] = p
		if math.IsInf(p.Lo, 0) || math.IsInf(p.Hi, 0) || math.IsNaN(p.Lo) || math.IsNaN(p.Hi) {
			pts[i].Lo, pts[i].Hi, noCI[i] = p.Median, p.Median, true
		}
		lo, hi = math.Min(lo, pts[i].Lo), math.Max(hi, pts[i].Hi)
	}
	if len(pts) == 0 {
		return nil, nil, nil, fmt.Errorf("site: chart %s %s has no points", s.Cell, s.Unit)
	}
	if hi <= lo { // one value: a band of ±5 % around it
		d := math.Max(math.Abs(lo)*0.05, 1e-9)
		lo, hi = lo-d, hi+d
	}
	pad := (hi - lo) * 0.08
	p = chart.New(s.Unit+" ("+chart.Better(s.Better)+")", "", "")
	p.Title.TextStyle.Font.Size = vg.Points(10)
	p.Y.Tick.Marker = chart.MetricTicks(s.Unit, false)
	p.Y.Min, p.Y.Max = lo-pad, hi+pad
	p.X.Min, p.X.Max = -0.5, float64(len(nights))-0.5
	p.X.Tick.Marker = nightTicks(nights)
	p.Add(plotter.NewGrid())
	var band, back, line plotter.XYs
	for i, pt := range pts {
		band = append(band, plotter.XY{X: float64(pt.File), Y: pt.Hi})
		q := pts[len(pts)-1-i]
		back = append(back, plotter.XY{X: float64(q.File), Y: q.Lo})
		line = append(line, plotter.XY{X: float64(pt.File), Y: pt.Median})
	}
	if len(pts) > 1 {
		poly, err := plotter.NewPolygon(append(band, back...))
		if err != nil {
			return nil, nil, nil, err
		}
		poly.Color, poly.LineStyle.Width = chart.Translucent(chart.Blue), 0
		l, err := plotter.NewLine(line)
		if err != nil {
			return nil, nil, nil, err
		}
		l.Color, l.Width = chart.Blue, vg.Points(1.5)
		p.Add(poly, l)
	}
	return p, pts, noCI, nil
}

// nightTicks labels up to six nights, evenly spread, by their dates.
func nightTicks(nights []Night) plot.Ticker {
	return plot.TickerFunc(func(_, _ float64) []plot.Tick {
		var ticks []plot.Tick
		step := max(1, (len(nights)+5)/6)
		for i := 0; i < len(nights); i += step {
			ticks = append(ticks, plot.Tick{Value: float64(i), Label: nightLabel(nights[i])})
		}
		return ticks
	})
}

func nightLabel(n Night) string {
	if len(n.CommitTime) >= 10 {
		return n.CommitTime[:10]
	}
	return n.Name
}

// formatValue writes a metric's value in SI: 1.23 M rows/s, 4.5 ms.
func formatValue(v float64, metric string) string {
	scale, unit := chart.AxisUnit(metric)
	return chart.Format(v*scale, unit)
}

// WriteSitePage renders one profile's page: every cell's charts (the median per
// night with its confidence band, change points marked, each point linking to its
// night's report, its tooltip naming the commit and its URL), and the nights with
// their commits, linked when the nights have a CommitLink.
func WritePage(w io.Writer, p Page) error {
	type cell struct {
		Name, Anchor string
		Charts       []laidChart
	}
	data := struct {
		Page
		Laid        []cell
		CommitLinks bool
	}{Page: p}
	for _, n := range p.Nights {
		data.CommitLinks = data.CommitLinks || n.CommitLink != ""
	}
	for _, c := range p.Cells {
		lc := cell{Name: c.Name, Anchor: c.Anchor}
		for _, ch := range c.Charts {
			laid, err := layout(ch, p.Nights)
			if err != nil {
				return err
			}
			lc.Charts = append(lc.Charts, laid)
		}
		data.Laid = append(data.Laid, lc)
	}
	return pageTemplate.Execute(w, data)
}

// IndexEntry is one profile page of the index.
type IndexEntry struct {
	Machine, Profile, Page string
	Nights                 int
	Cells                  []Cell // names and anchors
}

// WriteIndex renders the index of every machine's profile pages and their cells.
func WriteIndex(w io.Writer, entries []IndexEntry) error {
	return indexTemplate.Execute(w, entries)
}

const siteStyle = `body{font-family:sans-serif;margin:2em;color:#222}h1{font-size:1.4em}h2{font-size:1.1em;margin-top:2em}
.chart{margin:0.5em 0}.point{fill:#0072B2}.change-point{stroke-width:2;stroke-dasharray:5 3}
.change-point.worse{stroke:#D55E00}.change-point.better{stroke:#009E73}
table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left;border-bottom:1px solid #ddd}`

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>backfill-bench nightly: {{.Profile}} on {{.Machine}}</title>
<style>` + siteStyle + `</style></head><body>
<p><a href="{{.Index}}">all profiles</a></p>
<h1>Nightly trends: profile {{.Profile}}, machine {{.Machine}}</h1>
<p>{{len .Nights}} nights. Each point is a night's median with its 95 % confidence interval (the band); a dashed line marks a change point (red: worse, green: better). A point links to its night's report, and its tooltip names the commit{{if .CommitLinks}} with the URL of its page; the table of <a href="#nights">nights</a> links each commit{{end}}.</p>
{{range .Laid}}<h2 id="{{.Anchor}}">{{.Name}}</h2>
{{range .Charts}}<div class="chart" data-unit="{{.Unit}}"><svg xmlns="http://www.w3.org/2000/svg" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="{{.Unit}}">
{{.Body}}{{range .Changes}}<line class="{{.Class}}" x1="{{.X}}" y1="{{.Y1}}" x2="{{.X}}" y2="{{.Y2}}"><title>{{.Title}}</title></line>
{{end}}{{range .Points}}<a href="{{.Href}}"><circle class="point" cx="{{.X}}" cy="{{.Y}}" r="3.5"><title>{{.Title}}</title></circle></a>
{{end}}</svg></div>
{{end}}{{end}}<h2 id="nights">Nights</h2>
<table><tr><th>night</th><th>commit</th><th>commit time</th></tr>
{{range .Nights}}<tr><td><a href="{{.Report}}">{{.Name}}</a></td><td>{{if .CommitLink}}<a href="{{.CommitLink}}">{{.Commit}}</a>{{else}}{{.Commit}}{{end}}</td><td>{{.CommitTime}}</td></tr>
{{end}}</table>
</body></html>
`))

var indexTemplate = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>backfill-bench nightly</title>
<style>` + siteStyle + `</style></head><body>
<h1>backfill-bench nightly</h1>
{{range .}}<h2><a href="{{.Page}}">profile {{.Profile}}</a> on machine {{.Machine}} ({{.Nights}} nights)</h2>
<ul>{{$page := .Page}}{{range .Cells}}<li><a href="{{$page}}#{{.Anchor}}">{{.Name}}</a></li>
{{end}}</ul>
{{else}}<p>No nights recorded yet.</p>
{{end}}</body></html>
`))
