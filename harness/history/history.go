// Package history keeps the nightly record of one machine: its nights, the change
// points, newest-night and drift alerts over them, their trends and nightly.md.
package history

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/render"
	"github.com/backfill-bench/backfill-bench/harness/trend"
)

// Night is one results file of the history: one nightly run on one machine.
type Night struct {
	Name       string // its directory: <UTC time>-<short commit>
	Commit     string
	CommitTime string // RFC 3339, from the results' commit-time config
	Results    []*benchfmt.Result
	Units      benchfmt.UnitMetadataMap
}

// NewNight makes the night of results recorded under name.
func NewNight(name string, results []*benchfmt.Result, units benchfmt.UnitMetadataMap) Night {
	n := Night{Name: name, Results: results, Units: units}
	if len(results) > 0 {
		n.Commit, n.CommitTime = results[0].GetConfig(contract.ConfigCommit), results[0].GetConfig(contract.ConfigCommitTime)
	}
	return n
}

// Sort orders nights as every analysis and plot of them does: by commit time, then
// by name (the UTC time of the run), so two nights of one commit keep their order.
func Sort(nights []Night) {
	sort.SliceStable(nights, func(i, j int) bool {
		a, b := nights[i], nights[j]
		if a.CommitTime != b.CommitTime {
			return a.CommitTime < b.CommitTime
		}
		return a.Name < b.Name
	})
}

// Dir is where the nights of one machine fingerprint are kept.
func Dir(root, fingerprint string) string { return filepath.Join(root, fingerprint) }

// Load reads every night of one machine, in Sort's order. A night whose results
// cannot be read is skipped and named in skipped with why and the fix, so one broken
// night does not stop every later nightly.
func Load(root, fingerprint string) (nights []Night, skipped []string, err error) {
	dir := Dir(root, fingerprint)
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return nil, nil, fmt.Errorf("history: %w", err)
	}
	for _, e := range entries {
		file := filepath.Join(dir, e.Name(), "results.txt")
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(file); err != nil {
			continue
		}
		results, units, err := contract.ReadFiles(file)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("night %s skipped: %v (fix the file or remove the night's directory)", e.Name(), err))
			continue
		}
		nights = append(nights, NewNight(e.Name(), results, units))
	}
	Sort(nights)
	return nights, skipped, nil
}

// Alert kinds.
const (
	AlertChange = "change point" // a step somewhere in the history
	AlertNewest = "newest night" // the latest night against the nights before it
	AlertDrift  = "drift"        // the latest night against the pinned baseline
)

// Alert is a change worth a human's look.
type Alert struct {
	Kind      string       `json:"kind"`
	Status    judge.Status `json:"status"` // Regression or Improvement
	Cell      string       `json:"cell"`
	Unit      string       `json:"unit"`
	Night     string       `json:"night"` // the first night after the change
	Commit    string       `json:"commit"`
	Delta     float64      `json:"delta"` // relative change of the level
	P         float64      `json:"p"`
	Threshold float64      `json:"threshold"`
	// Previous is the commit of the night before the change (or before the newest
	// night): the good end of a bisect to the commit that made it.
	Previous string `json:"previous_commit,omitempty"`
}

// Config tunes the analysis of a history.
type Config struct {
	judge.Options // thresholds, and the alpha and correction of the newest-night and drift tests
	ChangePoint   ChangePointConfig
	Baseline      string // the pinned night's name; "": the oldest night
	Window        int    // nights before the newest pooled as its reference (default 5)
	// MaxNights bounds the change-point search, whose cost grows with the square of
	// the series: only the newest MaxNights nights are searched (default 100, about
	// three months; a step older than that was alerted while it was in the window).
	MaxNights int
}

// DefaultMaxNights is Config.MaxNights's default.
const DefaultMaxNights = 100

// WithDefaults fills the zero fields: judge.DefaultAlpha, Holm, a window of 5 nights, and
// DefaultMaxNights.
func (cfg Config) WithDefaults() Config {
	if cfg.Alpha == 0 {
		cfg.Alpha = judge.DefaultAlpha
	}
	if cfg.Correction == "" {
		cfg.Correction = judge.Holm
	}
	if cfg.Window == 0 {
		cfg.Window = 5
	}
	if cfg.MaxNights == 0 {
		cfg.MaxNights = DefaultMaxNights
	}
	return cfg
}

// AllSeries returns every judged (cell, metric) series of nights (in Sort's order),
// in the order they first appear; a point's File is its night's index.
func AllSeries(nights []Night, th judge.Thresholds) ([]trend.Series, error) {
	files := make([]trend.File, len(nights))
	for i, n := range nights {
		files[i] = trend.File{Results: n.Results, Units: n.Units}
	}
	return trend.Collect(files, func(unit string, better int) bool { return th[unit] != 0 && better != 0 })
}

// Analyze looks for change points in every judged (cell, metric) series of
// one machine's history, tests the newest night against the nights before it, and
// the newest against the pinned baseline for slow drift. Alerts are changes beyond
// the metric's threshold.
func Analyze(nights []Night, cfg Config) ([]Alert, error) {
	cfg = cfg.WithDefaults()
	all, err := AllSeries(nights, cfg.Thresholds)
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
	status := func(delta float64, better int, th float64) judge.Status {
		if math.Abs(delta) <= th {
			return judge.NoRegression
		}
		if (delta > 0) == (better > 0) {
			return judge.Improvement
		}
		return judge.Regression
	}
	// Tests of the newest night, corrected together (Holm) below.
	type pending struct {
		alert Alert
		p     float64
	}
	var tests []pending
	last := len(nights) - 1
	for _, ts := range all {
		s := flatten(ts)
		th := cfg.Thresholds[s.unit]
		// The search looks at the newest MaxNights points only.
		from := max(0, len(s.medians)-cfg.MaxNights)
		cps := ChangePoints(s.medians[from:], cfg.ChangePoint)
		for i := range cps {
			cps[i].Index += from
		}
		start := from
		for _, cp := range cps {
			before, after := judge.Median(s.medians[start:cp.Index]), judge.Median(s.medians[cp.Index:nextIndex(cps, cp.Index, len(s.medians))])
			delta := after/before - 1
			if st := status(delta, s.better, th); st != judge.NoRegression && before != 0 {
				n := nights[s.nights[cp.Index]]
				a := Alert{Kind: AlertChange, Status: st, Cell: s.cell, Unit: s.unit, Night: n.Name, Commit: n.Commit, Delta: delta, P: cp.P, Threshold: th}
				if cp.Index > 0 {
					a.Previous = nights[s.nights[cp.Index-1]].Commit
				}
				alerts = append(alerts, a)
			}
			start = cp.Index
		}
		k := len(s.nights) - 1
		if k < 1 || s.nights[k] != last {
			continue // the series has no point in the newest night, or nothing before it
		}
		// The newest night against the nights before it since the last change point.
		ref0 := max(start, k-cfg.Window)
		if ref0 >= k {
			ref0 = max(0, k-cfg.Window)
		}
		if ref := pool(s.samples[ref0:k]); len(ref) > 0 {
			if a, p, ok := compareSamples(ref, s.samples[k], s, th, status); ok {
				a.Kind, a.Night, a.Commit = AlertNewest, nights[last].Name, nights[last].Commit
				a.Previous = nights[s.nights[k-1]].Commit
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
	adj, err := judge.Adjust(cfg.Correction, ps)
	if err != nil {
		return nil, err
	}
	for i, t := range tests {
		if adj[i] <= cfg.Alpha && t.alert.Status != judge.NoRegression {
			t.alert.P = adj[i]
			alerts = append(alerts, t.alert)
		}
	}
	return alerts, nil
}

// series is a trend.Series as parallel slices, for the change-point search.
type series struct {
	cell, unit string
	better     int
	nights     []int       // index into the history, for each point
	medians    []float64   // per point
	samples    [][]float64 // per point
}

func flatten(ts trend.Series) *series {
	s := &series{cell: ts.Cell, unit: ts.Unit, better: ts.Better, medians: ts.Medians()}
	for _, p := range ts.Points {
		s.nights = append(s.nights, p.File)
		s.samples = append(s.samples, p.Samples)
	}
	return s
}

// compareSamples tests head against base with the Mann–Whitney U test and sizes the
// change by the medians; ok is false when the test cannot be made.
func compareSamples(base, head []float64, s *series, th float64, status func(float64, int, float64) judge.Status) (Alert, float64, bool) {
	thresholds := benchmath.DefaultThresholds
	b, h := benchmath.NewSample(base, &thresholds), benchmath.NewSample(head, &thresholds)
	cmp := benchmath.AssumeNothing.Compare(b, h)
	mb, mh := judge.Median(base), judge.Median(head)
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
		if a.Kind == AlertNewest && a.Status == judge.Regression {
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

// writeAlerts renders alerts as Markdown list items, each linking the trend plot
// of its profile.
func writeAlerts(b *strings.Builder, alerts []Alert) {
	if len(alerts) == 0 {
		b.WriteString("No alerts.\n")
		return
	}
	for _, a := range alerts {
		plot := "trends.png"
		if c, err := contract.ParseName(a.Cell); err == nil {
			plot = TrendName(c.Profile) + ".png"
		}
		fmt.Fprintf(b, "- %s **%s** (%s): `%s` %s %+.2f%% (threshold %g%%), first in night `%s`, commit `%s`, p = %.3g — [trend](%s)\n",
			render.Mark(a.Status), a.Status, a.Kind, a.Cell, a.Unit, 100*a.Delta, 100*a.Threshold, a.Night, contract.ShortCommit(a.Commit), a.P, plot)
	}
}
