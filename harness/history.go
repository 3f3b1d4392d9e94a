package harness

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

// Night is one results file of the history: one nightly run on one machine.
type Night struct {
	Name       string // its directory: <UTC time>-<short commit>
	Commit     string
	CommitTime string
	Results    []*benchfmt.Result
	Units      benchfmt.UnitMetadataMap
}

// HistoryDir is where the nights of one machine fingerprint are kept.
func HistoryDir(root, fingerprint string) string { return filepath.Join(root, fingerprint) }

// LoadHistory reads every night of one machine, oldest first by directory name
// (which starts with the UTC time of the run).
func LoadHistory(root, fingerprint string) ([]Night, error) {
	dir := HistoryDir(root, fingerprint)
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("history: %w", err)
	}
	var nights []Night
	for _, e := range entries {
		file := filepath.Join(dir, e.Name(), "results.txt")
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(file); err != nil {
			continue
		}
		results, units, err := readResultFiles(file)
		if err != nil {
			return nil, err
		}
		n := Night{Name: e.Name(), Results: results, Units: units}
		if len(results) > 0 {
			n.Commit, n.CommitTime = configOf(results[0], "commit"), configOf(results[0], "commit-time")
		}
		nights = append(nights, n)
	}
	sort.Slice(nights, func(i, j int) bool { return nights[i].Name < nights[j].Name })
	return nights, nil
}

// Alert kinds.
const (
	AlertChange = "change point" // a step somewhere in the history
	AlertNewest = "newest night" // the latest night against the nights before it
	AlertDrift  = "drift"        // the latest night against the pinned baseline
)

// Alert is a change worth a human's look.
type Alert struct {
	Kind      string  `json:"kind"`
	Status    string  `json:"status"` // Regression or Improvement
	Cell      string  `json:"cell"`
	Unit      string  `json:"unit"`
	Night     string  `json:"night"` // the first night after the change
	Commit    string  `json:"commit"`
	Delta     float64 `json:"delta"` // relative change of the level
	P         float64 `json:"p"`
	Threshold float64 `json:"threshold"`
}

// HistoryConfig tunes the analysis of a history.
type HistoryConfig struct {
	Thresholds  Thresholds
	Alpha       float64 // for the newest-night and drift tests, after Holm correction
	ChangePoint ChangePointConfig
	Baseline    string // the pinned night's name; "": the oldest night
	Window      int    // nights before the newest pooled as its reference (default 5)
}

// series is one (cell, metric) over the nights.
type series struct {
	cell, unit string
	better     int
	nights     []int       // index into the history, for each point
	medians    []float64   // per point
	samples    [][]float64 // per point
}

// historySeries gathers every judged (cell, metric) series of the history.
func historySeries(nights []Night, th Thresholds) ([]*series, error) {
	byKey := map[[2]string]*series{}
	var order []*series
	for ni, n := range nights {
		g, err := NewGrid(GridConfig{Row: ".fullname", Col: ".file", Ignore: ".config"}, n.Results, n.Units)
		if err != nil {
			return nil, err
		}
		for _, t := range g.Tables {
			if th[t.Unit] == 0 || t.Better == 0 {
				continue
			}
			for _, row := range t.Rows {
				for _, col := range t.Cols {
					c := t.Cells[GridKey{row, col}]
					if c == nil {
						continue
					}
					k := [2]string{row.StringValues(), t.Unit}
					s := byKey[k]
					if s == nil {
						s = &series{cell: k[0], unit: k[1], better: t.Better}
						byKey[k] = s
						order = append(order, s)
					}
					s.nights = append(s.nights, ni)
					s.medians = append(s.medians, c.Summary.Center)
					s.samples = append(s.samples, c.Sample.Values)
				}
			}
		}
	}
	return order, nil
}

// AnalyzeHistory looks for change points in every judged (cell, metric) series of
// one machine's history, tests the newest night against the nights before it, and
// the newest against the pinned baseline for slow drift. Alerts are changes beyond
// the metric's threshold.
func AnalyzeHistory(nights []Night, cfg HistoryConfig) ([]Alert, error) {
	if cfg.Alpha == 0 {
		cfg.Alpha = 0.05
	}
	if cfg.Window == 0 {
		cfg.Window = 5
	}
	all, err := historySeries(nights, cfg.Thresholds)
	if err != nil {
		return nil, err
	}
	baseline := 0
	for i, n := range nights {
		if n.Name == cfg.Baseline {
			baseline = i
		}
	}
	if cfg.Baseline != "" && nights[baseline].Name != cfg.Baseline {
		return nil, fmt.Errorf("history: pinned baseline %q is not a night of this machine", cfg.Baseline)
	}
	var alerts []Alert
	status := func(delta float64, better int, th float64) string {
		if math.Abs(delta) <= th {
			return ""
		}
		if (delta > 0) == (better > 0) {
			return Improvement
		}
		return Regression
	}
	// Tests of the newest night, corrected together (Holm) below.
	type pending struct {
		alert Alert
		p     float64
	}
	var tests []pending
	last := len(nights) - 1
	for _, s := range all {
		th := cfg.Thresholds[s.unit]
		cps := ChangePoints(s.medians, cfg.ChangePoint)
		start := 0
		for _, cp := range cps {
			before, after := median(s.medians[start:cp.Index]), median(s.medians[cp.Index:nextIndex(cps, cp.Index, len(s.medians))])
			delta := after/before - 1
			if st := status(delta, s.better, th); st != "" && before != 0 {
				n := nights[s.nights[cp.Index]]
				alerts = append(alerts, Alert{Kind: AlertChange, Status: st, Cell: s.cell, Unit: s.unit, Night: n.Name, Commit: n.Commit, Delta: delta, P: cp.P, Threshold: th})
			}
			start = cp.Index
		}
		k := len(s.nights) - 1
		if k < 1 || s.nights[k] != last {
			continue // the series has no point in the newest night, or nothing before it
		}
		// The newest night against the nights before it since the last change point.
		from := max(start, k-cfg.Window)
		if from >= k {
			from = max(0, k-cfg.Window)
		}
		if ref := pool(s.samples[from:k]); len(ref) > 0 {
			if a, p, ok := compareSamples(ref, s.samples[k], s, th, status); ok {
				a.Kind, a.Night, a.Commit = AlertNewest, nights[last].Name, nights[last].Commit
				tests = append(tests, pending{a, p})
			}
		}
		// Slow drift: the newest night against the pinned baseline.
		for i, ni := range s.nights {
			if ni == baseline && i < k {
				if a, p, ok := compareSamples(s.samples[i], s.samples[k], s, th, status); ok {
					a.Kind, a.Night, a.Commit = AlertDrift, nights[last].Name, nights[last].Commit
					tests = append(tests, pending{a, p})
				}
			}
		}
	}
	ps := make([]float64, len(tests))
	for i, t := range tests {
		ps[i] = t.p
	}
	adj, err := Adjust(Holm, ps)
	if err != nil {
		return nil, err
	}
	for i, t := range tests {
		if adj[i] <= cfg.Alpha && t.alert.Status != "" {
			t.alert.P = adj[i]
			alerts = append(alerts, t.alert)
		}
	}
	return alerts, nil
}

// compareSamples tests head against base with the Mann–Whitney U test and sizes the
// change by the medians; ok is false when the test cannot be made.
func compareSamples(base, head []float64, s *series, th float64, status func(float64, int, float64) string) (Alert, float64, bool) {
	thresholds := benchmath.DefaultThresholds
	b, h := benchmath.NewSample(base, &thresholds), benchmath.NewSample(head, &thresholds)
	cmp := benchmath.AssumeNothing.Compare(b, h)
	mb, mh := median(base), median(head)
	if mb == 0 {
		return Alert{}, 1, false
	}
	delta := mh/mb - 1
	return Alert{Status: status(delta, s.better, th), Cell: s.cell, Unit: s.unit, Delta: delta, Threshold: th}, cmp.P, true
}

// NewestRegressions are the alerts that the newest night starts a regression.
func NewestRegressions(alerts []Alert) []Alert {
	var out []Alert
	for _, a := range alerts {
		if a.Kind == AlertNewest && a.Status == Regression {
			out = append(out, a)
		}
	}
	return out
}

func nextIndex(cps []ChangePoint, after, n int) int {
	for _, cp := range cps {
		if cp.Index > after {
			return cp.Index
		}
	}
	return n
}

func pool(samples [][]float64) []float64 {
	var out []float64
	for _, s := range samples {
		out = append(out, s...)
	}
	return out
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// writeAlerts renders alerts as Markdown list items, each linking the trend plot
// of its profile.
func writeAlerts(b *strings.Builder, alerts []Alert) {
	if len(alerts) == 0 {
		b.WriteString("No alerts.\n")
		return
	}
	for _, a := range alerts {
		plot := "trends.png"
		if c, ok := cellOfName(a.Cell); ok {
			plot = "trends-" + safeName(c.Profile) + ".png"
		}
		fmt.Fprintf(b, "- %s **%s** (%s): `%s` %s %+.2f%% (threshold %g%%), first in night `%s`, commit `%s`, p = %.3g — [trend](%s)\n",
			mark(a.Status), a.Status, a.Kind, cellLabel(a.Cell), a.Unit, 100*a.Delta, 100*a.Threshold, a.Night, shortCommit(a.Commit), a.P, plot)
	}
}

func shortCommit(c string) string { return c[:min(len(c), 12)] }
