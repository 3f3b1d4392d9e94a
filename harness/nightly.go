package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/backfill-bench/backfill-bench/bench"
	"github.com/backfill-bench/backfill-bench/bench/profile"
)

// NightlyMatrix is the matrix that guards main: every profile marked nightly, two
// workloads, persistence off and on, every scan, 100 ms and 1 s barriers.
func NightlyMatrix(profiles *profile.Set) bench.Matrix {
	m := QuickMatrix()
	m.Profiles = nil
	for _, p := range profiles.All() {
		if p.Nightly {
			m.Profiles = append(m.Profiles, p.Name)
		}
	}
	m.Scans = bench.Scans
	m.Barriers = []time.Duration{100 * time.Millisecond, time.Second}
	return m
}

// NightlyCount is the default rounds of a nightly run.
const NightlyCount = 5

// NightlyConfig configures `benchrun nightly`.
type NightlyConfig struct {
	Run      RunConfig // the matrix to run; ignored with Results
	Results  string    // a results file to record instead of running (merged shards)
	History  string    // default <module>/results/history
	Analysis HistoryConfig
}

// NightlyReport is what a nightly run found.
type NightlyReport struct {
	Night   string // the new night's directory
	Dir     string // the machine's history directory
	Nights  int
	Alerts  []Alert
	Newest  []Alert // regressions the newest night starts
	RunErr  error   // failed runs, kept going
	Results string  // the results file recorded
}

// Nightly runs the matrix (or takes a results file), records it in the history of
// its machine, looks for change points, newest-night regressions and drift, draws
// the trends and writes nightly.md and alerts.json. The error is ErrRegression when
// the newest night starts a regression.
func Nightly(ctx context.Context, cfg NightlyConfig) (*NightlyReport, error) {
	src, err := InspectSource(ctx, cfg.Run.Src)
	if err != nil {
		return nil, err
	}
	if cfg.History == "" {
		cfg.History = filepath.Join(src.Dir, "results", "history")
	}
	rep := &NightlyReport{Results: cfg.Results}
	if rep.Results == "" {
		run, err := RunMatrix(ctx, cfg.Run)
		if run == nil || ctx.Err() != nil || len(run.Results) == 0 {
			return nil, errors.Join(errors.New("nightly: nothing to record"), err)
		}
		rep.RunErr = err
		rep.Results = filepath.Join(run.Dir, "results.txt")
	}
	results, _, err := readResultFiles(rep.Results)
	if err != nil {
		return nil, err
	}
	if len(results) == 0 {
		return nil, fmt.Errorf("nightly: no results in %s", rep.Results)
	}
	fingerprint := configOf(results[0], "machine")
	if fingerprint == "" {
		fingerprint = InspectMachine().Fingerprint
	}
	commit := configOf(results[0], "commit")
	if commit == "" {
		commit = src.Commit
	}
	rep.Dir = HistoryDir(cfg.History, fingerprint)
	label := "nogit"
	if commit != "" {
		label = shortCommit(commit)
	}
	rep.Night = time.Now().UTC().Format("20060102T150405Z") + "-" + label
	nightDir := filepath.Join(rep.Dir, rep.Night)
	if err := os.MkdirAll(nightDir, 0o755); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	data, err := os.ReadFile(rep.Results)
	if err != nil {
		return nil, err
	}
	if err := WriteFileAtomic(filepath.Join(nightDir, "results.txt"), data); err != nil {
		return nil, err
	}

	nights, err := LoadHistory(cfg.History, fingerprint)
	if err != nil {
		return nil, err
	}
	rep.Nights = len(nights)
	if pinned, err := os.ReadFile(filepath.Join(rep.Dir, "baseline")); err == nil && cfg.Analysis.Baseline == "" {
		cfg.Analysis.Baseline = strings.TrimSpace(string(pinned))
	}
	if rep.Alerts, err = AnalyzeHistory(nights, cfg.Analysis); err != nil {
		return nil, err
	}
	rep.Newest = NewestRegressions(rep.Alerts)

	var files []string
	for _, n := range nights {
		files = append(files, filepath.Join(rep.Dir, n.Name, "results.txt"))
	}
	trends, trendErr := PlotTrendFiles(files, rep.Dir)
	md, err := nightlyReport(rep, nights, cfg, trends, trendErr)
	if err != nil {
		return nil, err
	}
	for _, f := range []string{filepath.Join(rep.Dir, "nightly.md"), filepath.Join(nightDir, "nightly.md")} {
		if err := WriteFileAtomic(f, []byte(md)); err != nil {
			return nil, err
		}
	}
	js, err := json.MarshalIndent(rep.Alerts, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := WriteFileAtomic(filepath.Join(rep.Dir, "alerts.json"), append(js, '\n')); err != nil {
		return nil, err
	}
	fmt.Fprint(cfg.Run.Stdout, md)
	fmt.Fprintf(cfg.Run.Stdout, "\nhistory: %s (%d nights)\n", rep.Dir, rep.Nights)
	switch {
	case len(rep.Newest) > 0:
		return rep, ErrRegression
	case rep.RunErr != nil:
		return rep, rep.RunErr
	}
	return rep, nil
}

// nightlyReport renders nightly.md: alerts first, then the newest night against the
// one before it, then the history.
func nightlyReport(rep *NightlyReport, nights []Night, cfg NightlyConfig, trends []string, trendErr error) (string, error) {
	var b strings.Builder
	latest := nights[len(nights)-1]
	fmt.Fprintf(&b, "# Nightly %s\n\nCommit `%s`, machine `%s`, %d nights in the history.\n\n", latest.Name, shortCommit(latest.Commit), filepath.Base(rep.Dir), len(nights))
	if len(rep.Newest) > 0 {
		fmt.Fprintf(&b, "**✗ The newest night starts %d regression(s).**\n\n", len(rep.Newest))
	} else {
		b.WriteString("**✓ The newest night starts no regression.**\n\n")
	}
	b.WriteString("## Alerts\n\n")
	writeAlerts(&b, rep.Alerts)
	if rep.RunErr != nil {
		fmt.Fprintf(&b, "\nSome runs failed: %v\n", rep.RunErr)
	}
	if trendErr != nil {
		fmt.Fprintf(&b, "\nNo trend plot: %v\n", trendErr)
	}
	if len(trends) > 0 {
		b.WriteString("\n## Trends\n\n")
		for _, t := range trends {
			fmt.Fprintf(&b, "![%s](%s.png)\n", t, t)
		}
	}
	if len(nights) >= 2 {
		prev := nights[len(nights)-2]
		results, units, err := readResultFiles(filepath.Join(rep.Dir, prev.Name, "results.txt"), filepath.Join(rep.Dir, latest.Name, "results.txt"))
		if err != nil {
			return "", err
		}
		g, err := NewGrid(GridConfig{Row: ".fullname", Col: ".file", Ignore: CompareIgnore}, results, units)
		if err != nil {
			return "", err
		}
		v, err := Judge(g, cfg.Analysis.Thresholds, Holm, max(cfg.Analysis.Alpha, 0.05))
		if err != nil {
			return "", err
		}
		v.Base, v.Head = prev.Name, latest.Name
		fmt.Fprintf(&b, "\n## Newest night vs the one before\n\n```\n")
		WriteVerdictTable(&b, v)
		b.WriteString("```\n")
	}
	b.WriteString("\n## Method\n\nChange points: E-divisive means over each (cell, metric) series of nightly medians, with a permutation test; a change counts when beyond the metric's threshold. Newest night: its samples against those of the nights before it since the last change (Mann–Whitney U, Holm-corrected). Drift: the newest night against the pinned baseline (`baseline` file, or the oldest night).\n")
	return b.String(), nil
}
