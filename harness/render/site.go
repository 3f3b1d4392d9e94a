package render

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strings"

	"golang.org/x/perf/benchunit"
)

// SitePage is one profile's page of a machine's nightly history.
type SitePage struct {
	Machine, Profile string
	Index            string // link back to the index
	Nights           []SiteNight
	Cells            []SiteCell
}

// SiteNight is one night: its name, commit, and links to its report and commit
// ("" when unknown).
type SiteNight struct {
	Name, Commit, CommitTime string
	Report, CommitLink       string
}

// SiteCell is one cell's charts, one per judged metric.
type SiteCell struct {
	Name, Anchor string
	Charts       []SiteChart
}

// SiteChart is one metric of a cell over the nights.
type SiteChart struct {
	Unit         string
	Better       int
	Points       []SitePoint
	ChangePoints []SiteChange
}

// SitePoint is a night's median and its 95 % confidence interval.
type SitePoint struct {
	Night          int // index in SitePage.Nights
	Median, Lo, Hi float64
}

// SiteChange is a change point: the first night after the change, and the change.
type SiteChange struct {
	Night int
	Delta float64
	Worse bool
}

// The chart's size and margins, in SVG user units.
const (
	chartW, chartH           = 640.0, 170.0
	chartLeft, chartRight    = 70.0, 10.0
	chartTop, chartBottomPad = 10.0, 30.0
)

// svgChart is a chart laid out for the template.
type svgChart struct {
	Unit, Arrow       string
	Band, Line        string // points of the CI polygon and the median polyline
	Points            []svgPoint
	Changes           []svgChange
	YMin, YMax        string
	XFirst, XLast     string
	W, H, Left, Right float64
	PlotBottom        float64
}

type svgPoint struct {
	X, Y  float64
	Href  string
	Title string
}

type svgChange struct {
	X, Y1, Y2 float64
	Title     string
	Class     string
}

// layout places a chart's points: x by night over the page's nights, y over the
// range of the intervals.
func layout(c SiteChart, nights []SiteNight) svgChart {
	// A night of too few runs for an interval has an infinite one: its band
	// narrows to the median there.
	pts := slices.Clone(c.Points)
	noCI := make([]bool, len(pts))
	for i, p := range pts {
		if math.IsInf(p.Lo, 0) || math.IsInf(p.Hi, 0) || math.IsNaN(p.Lo) || math.IsNaN(p.Hi) {
			pts[i].Lo, pts[i].Hi, noCI[i] = p.Median, p.Median, true
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range pts {
		lo, hi = math.Min(lo, p.Lo), math.Max(hi, p.Hi)
	}
	if hi <= lo { // one value: a band of ±5 % around it
		d := math.Max(math.Abs(lo)*0.05, 1e-9)
		lo, hi = lo-d, hi+d
	}
	pad := (hi - lo) * 0.08
	lo, hi = lo-pad, hi+pad
	bottom := chartH - chartBottomPad
	x := func(night int) float64 {
		if len(nights) < 2 {
			return (chartLeft + chartW - chartRight) / 2
		}
		return chartLeft + float64(night)/float64(len(nights)-1)*(chartW-chartLeft-chartRight)
	}
	y := func(v float64) float64 { return bottom - (v-lo)/(hi-lo)*(bottom-chartTop) }
	out := svgChart{Unit: c.Unit, Arrow: arrow(c.Better), YMin: formatValue(lo, c.Unit), YMax: formatValue(hi, c.Unit),
		W: chartW, H: chartH, Left: chartLeft, Right: chartW - chartRight, PlotBottom: bottom}
	if len(nights) > 0 {
		out.XFirst, out.XLast = nightLabel(nights[0]), nightLabel(nights[len(nights)-1])
	}
	var band, back, line []string
	for i, p := range pts {
		px := x(p.Night)
		band = append(band, fmt.Sprintf("%.1f,%.1f", px, y(p.Hi)))
		back = append(back, fmt.Sprintf("%.1f,%.1f", x(pts[len(pts)-1-i].Night), y(pts[len(pts)-1-i].Lo)))
		line = append(line, fmt.Sprintf("%.1f,%.1f", px, y(p.Median)))
		n := nights[p.Night]
		ci := fmt.Sprintf("[%s, %s]", formatValue(p.Lo, c.Unit), formatValue(p.Hi, c.Unit))
		if noCI[i] {
			ci = "(too few runs for a 95 % interval)"
		}
		title := fmt.Sprintf("%s, commit %s: %s %s", n.Name, n.Commit, formatValue(p.Median, c.Unit), ci)
		if n.CommitLink != "" {
			// A tooltip cannot hold a link: it gives the URL, the nights table links it.
			title += "\ncommit: " + n.CommitLink
		}
		out.Points = append(out.Points, svgPoint{X: px, Y: y(p.Median), Href: n.Report, Title: title})
	}
	out.Band, out.Line = strings.Join(append(band, back...), " "), strings.Join(line, " ")
	for _, ch := range c.ChangePoints {
		class := "change-point better"
		if ch.Worse {
			class = "change-point worse"
		}
		out.Changes = append(out.Changes, svgChange{X: x(ch.Night) - 0.5*(x(1)-x(0)), Y1: chartTop, Y2: bottom, Class: class,
			Title: fmt.Sprintf("change point: %+.1f %% from night %s", 100*ch.Delta, nights[ch.Night].Name)})
	}
	return out
}

func nightLabel(n SiteNight) string {
	if len(n.CommitTime) >= 10 {
		return n.CommitTime[:10]
	}
	return n.Name
}

// formatValue scales v as benchstat prints its unit: 1.23M, 4.5m.
func formatValue(v float64, unit string) string {
	return benchunit.Scale(v, benchunit.ClassOf(unit))
}

// WriteSitePage renders one profile's page: every cell's charts (the median per
// night with its confidence band, change points marked, each point linking to its
// night's report, its tooltip naming the commit and its URL), and the nights with
// their commits, linked when the nights have a CommitLink.
func WriteSitePage(w io.Writer, p SitePage) error {
	type cell struct {
		Name, Anchor string
		Charts       []svgChart
	}
	data := struct {
		SitePage
		Laid        []cell
		CommitLinks bool
	}{SitePage: p}
	for _, n := range p.Nights {
		data.CommitLinks = data.CommitLinks || n.CommitLink != ""
	}
	for _, c := range p.Cells {
		lc := cell{Name: c.Name, Anchor: c.Anchor}
		for _, ch := range c.Charts {
			lc.Charts = append(lc.Charts, layout(ch, p.Nights))
		}
		data.Laid = append(data.Laid, lc)
	}
	return pageTemplate.Execute(w, data)
}

// SiteIndexEntry is one profile page of the index.
type SiteIndexEntry struct {
	Machine, Profile, Page string
	Nights                 int
	Cells                  []SiteCell // names and anchors
}

// WriteSiteIndex renders the index of every machine's profile pages and their cells.
func WriteSiteIndex(w io.Writer, entries []SiteIndexEntry) error {
	return indexTemplate.Execute(w, entries)
}

const siteStyle = `body{font-family:sans-serif;margin:2em;color:#222}h1{font-size:1.4em}h2{font-size:1.1em;margin-top:2em}
.chart{margin:0.5em 0}svg text{font-size:11px;fill:#444}.ci{fill:#0072B2;fill-opacity:0.18;stroke:none}
.median{fill:none;stroke:#0072B2;stroke-width:1.5}.point{fill:#0072B2}.change-point{stroke-width:2;stroke-dasharray:5 3}
.change-point.worse{stroke:#D55E00}.change-point.better{stroke:#009E73}.axis{stroke:#888;stroke-width:1}
table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left;border-bottom:1px solid #ddd}`

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>backfill-bench nightly: {{.Profile}} on {{.Machine}}</title>
<style>` + siteStyle + `</style></head><body>
<p><a href="{{.Index}}">all profiles</a></p>
<h1>Nightly trends: profile {{.Profile}}, machine {{.Machine}}</h1>
<p>{{len .Nights}} nights. Each point is a night's median with its 95 % confidence interval (the band); a dashed line marks a change point (red: worse, green: better). A point links to its night's report, and its tooltip names the commit{{if .CommitLinks}} with the URL of its page; the table of <a href="#nights">nights</a> links each commit{{end}}.</p>
{{range .Laid}}<h2 id="{{.Anchor}}">{{.Name}}</h2>
{{range .Charts}}<div class="chart" data-unit="{{.Unit}}"><svg xmlns="http://www.w3.org/2000/svg" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="{{.Unit}}">
<line class="axis" x1="{{.Left}}" y1="{{.PlotBottom}}" x2="{{.Right}}" y2="{{.PlotBottom}}"/>
<text x="4" y="14">{{.YMax}}</text><text x="4" y="{{.PlotBottom}}">{{.YMin}}</text>
<text x="{{.Left}}" y="{{.H}}" dy="-4">{{.XFirst}}</text><text x="{{.Right}}" y="{{.H}}" dy="-4" text-anchor="end">{{.XLast}}</text>
<text x="{{.Left}}" y="14" dx="6">{{.Unit}} {{.Arrow}}</text>
<polygon class="ci" points="{{.Band}}"/><polyline class="median" points="{{.Line}}"/>
{{range .Changes}}<line class="{{.Class}}" x1="{{.X}}" y1="{{.Y1}}" x2="{{.X}}" y2="{{.Y2}}"><title>{{.Title}}</title></line>
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
