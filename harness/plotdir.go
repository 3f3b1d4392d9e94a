package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/bench"
)

// PlotDir draws every plot a results or compare directory supports into its plots/
// folder and returns the files' base names (without .png/.svg). A plot the data
// cannot support is skipped with the reason in skipped, not an error.
func PlotDir(dir string) (made, skipped []string, err error) {
	kind, err := dirKind(dir)
	if err != nil {
		return nil, nil, err
	}
	out := filepath.Join(dir, "plots")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, nil, err
	}
	var (
		grid      *Grid
		colNames  []string
		variants  VariantTraces
		verdict   *Verdict
		variantOf func(t bench.Trace, side string) string
	)
	switch kind {
	case "run":
		results, units, err := readResultFiles(filepath.Join(dir, "results.txt"))
		if err != nil {
			return nil, nil, err
		}
		if grid, err = NewGrid(GridConfig{Row: ".fullname", Col: "/persist@(off on)"}, results, units); err != nil {
			return nil, nil, err
		}
		variantOf = func(t bench.Trace, _ string) string {
			c, err := bench.ParseName(t.Cell)
			if err != nil {
				return ""
			}
			return "persist=" + bench.OnOff(c.Persist)
		}
	case "compare":
		results, units, err := readResultFiles(filepath.Join(dir, "base.txt"), filepath.Join(dir, "head.txt"))
		if err != nil {
			return nil, nil, err
		}
		if grid, err = NewGrid(GridConfig{Row: ".fullname", Col: ".file", Ignore: CompareIgnore}, results, units); err != nil {
			return nil, nil, err
		}
		variantOf = func(_ bench.Trace, side string) string { return side }
		if data, err := os.ReadFile(filepath.Join(dir, "verdict.json")); err == nil {
			verdict = new(Verdict)
			if err := json.Unmarshal(data, verdict); err != nil {
				return nil, nil, fmt.Errorf("plot: %s: %w", filepath.Join(dir, "verdict.json"), err)
			}
		}
	}
	if len(grid.Tables) > 0 {
		for _, c := range grid.Tables[0].Cols {
			name := c.StringValues()
			if kind == "run" {
				name = "persist=" + name
			} else {
				name = map[string]string{filepath.Join(dir, "base.txt"): "base", filepath.Join(dir, "head.txt"): "head"}[name]
			}
			colNames = append(colNames, name)
		}
	}
	if variants, err = readVariantTraces(filepath.Join(dir, "traces"), colNames, variantOf); err != nil {
		return nil, nil, err
	}

	try := func(name string, draw func(base string) error) {
		defer func() {
			// gonum/plot panics on some degenerate ranges; a plot is not worth a crash.
			if r := recover(); r != nil {
				skipped = append(skipped, fmt.Sprintf("%s: could not draw: %v", name, r))
			}
		}()
		if err := draw(filepath.Join(out, name)); err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", name, err))
			return
		}
		made = append(made, name)
	}
	title := map[string]string{"run": "persist off vs on", "compare": "base vs head"}[kind]
	if verdict != nil {
		try("deltas", func(b string) error { return PlotDeltas(verdict, b) })
	}
	try("variants", func(b string) error { return PlotVariants(grid, colNames, title, b) })
	try("barrier-cdf", func(b string) error { return PlotBarrierCDF(variants, b) })
	try("bytes", func(b string) error { return PlotBytes(grid, colNames, b) })
	try("timeline", func(b string) error {
		// The last variant (persist=on, or head) of the first cell group.
		last := variants.Traces[len(variants.Traces)-1]
		if len(last) == 0 {
			return errors.New("no traces")
		}
		first := last[0].Cell
		var same []bench.Trace
		for _, t := range last {
			if t.Cell == first {
				same = append(same, t)
			}
		}
		t, _ := representative(same)
		return PlotTimeline(t, b)
	})
	return made, skipped, nil
}

// dirKind tells a run's results directory from a compare directory.
func dirKind(dir string) (string, error) {
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	switch {
	case exists("base.txt") && exists("head.txt"):
		return "compare", nil
	case exists("results.txt"):
		return "run", nil
	}
	return "", fmt.Errorf("plot: %s holds neither results.txt (a run) nor base.txt and head.txt (a compare)", dir)
}

// readVariantTraces reads every trace file under dir (and its side folders) and
// sorts the traces into the named variants.
func readVariantTraces(dir string, names []string, variantOf func(t bench.Trace, side string) string) (VariantTraces, error) {
	vt := VariantTraces{Names: names, Traces: make([][]bench.Trace, max(len(names), 1))}
	index := map[string]int{}
	for i, n := range names {
		index[n] = i
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	more, _ := filepath.Glob(filepath.Join(dir, "*", "*.jsonl"))
	files = append(files, more...)
	sort.Strings(files)
	for _, f := range files {
		side := filepath.Base(filepath.Dir(f))
		r, err := os.Open(f)
		if err != nil {
			return vt, err
		}
		traces, err := bench.ReadTraces(r, f)
		r.Close()
		if err != nil {
			return vt, err
		}
		for _, t := range traces {
			if i, ok := index[variantOf(t, side)]; ok {
				vt.Traces[i] = append(vt.Traces[i], t)
			}
		}
	}
	return vt, nil
}

// PlotTrendFiles draws trends-<profile>.png/.svg into out from results files,
// ordered by their commit-time config (files without one first, in their order),
// and returns the base names drawn.
func PlotTrendFiles(files []string, out string) ([]string, error) {
	type dated struct {
		TrendPoint
		at string
	}
	var pts []dated
	var profiles []string
	for _, f := range files {
		results, units, err := readResultFiles(f)
		if err != nil {
			return nil, err
		}
		if len(results) == 0 {
			return nil, fmt.Errorf("plot trends: no results in %s", f)
		}
		for _, r := range results {
			if c, ok := CellOf(r); ok && !slices.Contains(profiles, c.Profile) {
				profiles = append(profiles, c.Profile)
			}
		}
		at, commit := configOf(results[0], "commit-time"), configOf(results[0], "commit")
		label := filepath.Base(filepath.Dir(f))
		if at != "" {
			label = at[:min(len(at), 10)]
			if commit != "" {
				label += "\n" + commit[:min(len(commit), 7)]
			}
		}
		pts = append(pts, dated{TrendPoint{Label: label, Results: results, Units: units}, at})
	}
	if len(pts) == 0 {
		return nil, errors.New("plot trends: no results files")
	}
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].at < pts[j].at })
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	// One picture per profile: levels differ by profile, and a legend of every cell
	// of the matrix would cover the plot.
	var made []string
	for _, prof := range profiles {
		var series []TrendPoint
		for _, p := range pts {
			tp := p.TrendPoint
			tp.Results = nil
			for _, r := range p.Results {
				if c, ok := CellOf(r); ok && c.Profile == prof {
					tp.Results = append(tp.Results, r)
				}
			}
			series = append(series, tp)
		}
		name := "trends-" + safeName(prof)
		if err := PlotTrends(series, "profile "+prof+", ", filepath.Join(out, name)); err != nil {
			return made, err
		}
		made = append(made, name)
	}
	return made, nil
}

func configOf(r *benchfmt.Result, key string) string {
	if i, ok := r.ConfigIndex(key); ok {
		return string(r.Config[i].Value)
	}
	return ""
}
