package history

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/render"
	"github.com/backfill-bench/backfill-bench/harness/render/chart"
	"github.com/backfill-bench/backfill-bench/harness/render/site"
	"github.com/backfill-bench/backfill-bench/harness/trend"
	"github.com/backfill-bench/backfill-bench/internal/files"
)

// TrendName is the base name of a profile's trend plot.
func TrendName(profile string) string { return "trends-" + files.SafeName(profile) }

// Trends draws one trend plot per profile into out from nights already in Sort's
// order, and returns the base names drawn. Levels differ by profile, and a legend
// of every cell of the matrix would cover the plot.
func Trends(nights []Night, out string) ([]string, error) {
	if len(nights) == 0 {
		return nil, fmt.Errorf("plot trends: no results files")
	}
	var profiles []string
	for _, n := range nights {
		if len(n.Results) == 0 {
			return nil, fmt.Errorf("plot trends: no results in %s", n.Name)
		}
		for _, r := range n.Results {
			if c, ok := contract.CellOf(r); ok && !slices.Contains(profiles, c.Profile) {
				profiles = append(profiles, c.Profile)
			}
		}
	}
	var labels []string
	for _, n := range nights {
		label := n.Name
		if n.CommitTime != "" {
			label = n.CommitTime[:min(len(n.CommitTime), 10)]
			if n.Commit != "" {
				label += "\n" + contract.ShortCommit(n.Commit)
			}
		}
		labels = append(labels, label)
	}
	keyUnits := func(unit string, _ int) bool { return slices.Contains(chart.KeyUnits, unit) }
	var made []string
	for _, prof := range profiles {
		files := make([]trend.File, len(nights))
		for i, n := range nights {
			files[i].Units = n.Units
			for _, r := range n.Results {
				if c, ok := contract.CellOf(r); ok && c.Profile == prof {
					files[i].Results = append(files[i].Results, r)
				}
			}
		}
		series, err := trend.Collect(files, keyUnits)
		if err != nil {
			return made, err
		}
		name := TrendName(prof)
		if err := site.PlotTrends(series, labels, "profile "+prof+", ", filepath.Join(out, name)); err != nil {
			return made, err
		}
		made = append(made, name)
	}
	return made, nil
}

// Report is what nightly.md is written from.
type Report struct {
	Machine  string  // the history's machine fingerprint
	Nights   []Night // in Sort's order, the newest recorded one among them
	Newest   Night   // the night just recorded
	Alerts   []Alert
	Analysis Config
	RunErr   error    // failed runs of the night, kept going
	Trends   []string // trend plots drawn
	TrendErr error
}

// WriteReport renders nightly.md: alerts first, then the newest night against the
// night before it, then the history's method.
func WriteReport(b *strings.Builder, rep Report) {
	rep.Analysis = rep.Analysis.WithDefaults()
	latest := rep.Newest
	fmt.Fprintf(b, "# Nightly %s\n\nCommit `%s`, machine `%s`, %d nights in the history.\n\n", latest.Name, contract.ShortCommit(latest.Commit), rep.Machine, len(rep.Nights))
	if newest := NewestRegressions(rep.Alerts); len(newest) > 0 {
		fmt.Fprintf(b, "**✗ The newest night starts %d regression(s).**\n\n", len(newest))
	} else {
		b.WriteString("**✓ The newest night starts no regression.**\n\n")
	}
	b.WriteString("## Alerts\n\n")
	writeAlerts(b, rep.Alerts)
	if rep.RunErr != nil {
		fmt.Fprintf(b, "\nSome runs failed: %v\n", rep.RunErr)
	}
	if rep.TrendErr != nil {
		fmt.Fprintf(b, "\nNo trend plot: %v\n", rep.TrendErr)
	}
	if len(rep.Trends) > 0 {
		b.WriteString("\n## Trends\n\n")
		for _, t := range rep.Trends {
			fmt.Fprintf(b, "![%s](%s.png)\n", t, t)
		}
	}
	if prev, ok := before(rep.Nights, latest.Name); ok {
		units := benchfmt.UnitMetadataMap{}
		for _, m := range []benchfmt.UnitMetadataMap{prev.Units, latest.Units} {
			for k, u := range m {
				units[k] = u
			}
		}
		v, _, err := judge.Compare(judge.Side{Results: prev.Results}, judge.Side{Results: latest.Results}, units, rep.Analysis.Options)
		if err != nil {
			fmt.Fprintf(b, "\n## Newest night vs the one before\n\nNot compared: %v\n", err)
		} else {
			v.Base, v.Head = prev.Name, latest.Name
			b.WriteString("\n## Newest night vs the one before\n\n```\n")
			render.WriteVerdictTable(b, v)
			b.WriteString("```\n")
		}
	}
	fmt.Fprintf(b, "\n## Method\n\nNights are ordered by commit time. Change points: E-divisive means over each (cell, metric) series of nightly medians (the newest %d nights), with a permutation test; a change counts when beyond the metric's threshold. Newest night: its samples against those of the nights before it since the last change (Mann–Whitney U, %s correction, α = %g). Drift: the newest night against the pinned baseline (`baseline` file, or the oldest night).\n",
		rep.Analysis.MaxNights, rep.Analysis.Correction, rep.Analysis.Alpha)
}

// before is the night just before the named one.
func before(nights []Night, name string) (Night, bool) {
	for i, n := range nights {
		if n.Name == name && i > 0 {
			return nights[i-1], true
		}
	}
	return Night{}, false
}

// AlertsJSON is alerts.json's content.
func AlertsJSON(alerts []Alert) ([]byte, error) {
	js, err := json.MarshalIndent(alerts, "", "  ")
	return append(js, '\n'), err
}
