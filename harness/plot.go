package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/jobtrace"
	"github.com/backfill-bench/backfill-bench/harness/history"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/render"
)

// PlotDir draws the plots of a directory the user names: a run's results
// directory (results.txt) or a compare directory (base.txt and head.txt, and
// verdict.json for the deltas).
func PlotDir(dir string) (made, skipped []string, err error) {
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	var traces [][]jobtrace.Trace
	var ps render.PlotSet
	switch {
	case exists("base.txt") && exists("head.txt"):
		s, _, err := readSides(filepath.Join(dir, "base.txt"), filepath.Join(dir, "head.txt"))
		if err != nil {
			return nil, nil, err
		}
		v, g, err := judge.Compare(s.base, s.head, s.units, judge.Options{Thresholds: judge.DefaultThresholds(), Correction: judge.Holm, Alpha: judge.DefaultAlpha})
		if err != nil {
			return nil, nil, err
		}
		if data, err := os.ReadFile(filepath.Join(dir, "verdict.json")); err == nil {
			v = new(judge.Verdict) // the verdict as compare judged it, with its own options
			if err := json.Unmarshal(data, v); err != nil {
				return nil, nil, fmt.Errorf("plot: %s: %w", filepath.Join(dir, "verdict.json"), err)
			}
		} else {
			v = nil
		}
		for _, side := range []string{judge.SideBase, judge.SideHead} {
			ts, err := readTraces(globTraces(filepath.Join(dir, "traces", side)))
			if err != nil {
				return nil, nil, err
			}
			traces = append(traces, ts)
		}
		ps = render.PlotSet{Grid: g, ColNames: []string{judge.SideBase, judge.SideHead}, Title: "base vs head", Verdict: v, Traces: traces}
	case exists("results.txt"):
		results, units, err := contract.ReadFiles(filepath.Join(dir, "results.txt"))
		if err != nil {
			return nil, nil, err
		}
		g, err := render.SummaryGrid(results, nil, units)
		if err != nil {
			return nil, nil, err
		}
		ts, err := readTraces(globTraces(filepath.Join(dir, "traces")))
		if err != nil {
			return nil, nil, err
		}
		ps = runPlotSet(g, ts)
	default:
		return nil, nil, fmt.Errorf("plot: %s holds neither results.txt (a run) nor base.txt and head.txt (a compare)", dir)
	}
	return render.Plots(dir, ps)
}

// globTraces lists the trace files directly in dir, in name order.
func globTraces(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	return files
}

// PlotTrendFiles draws the trend plots of results files the user names into out,
// ordered as the nightly history orders nights (by commit time), and returns the
// base names drawn.
func PlotTrendFiles(paths []string, out string) ([]string, error) {
	var nights []history.Night
	for _, f := range paths {
		results, units, err := contract.ReadFiles(f)
		if err != nil {
			return nil, err
		}
		name := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		if filepath.Base(f) == "results.txt" {
			name = filepath.Base(filepath.Dir(f))
		}
		nights = append(nights, history.NewNight(name, results, units))
	}
	history.Sort(nights)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	return history.Trends(nights, out)
}

// MergeResults combines results files (of shards, say) into one benchfmt text: the
// union of unit lines, then every result with its config.
func MergeResults(paths []string) ([]byte, error) {
	results, units, err := contract.ReadFiles(paths...)
	if err != nil {
		return nil, err
	}
	return contract.Encode(results, units)
}
