package render

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/backfill-bench/backfill-bench/contract/jobtrace"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/render/gridplot"
	"github.com/backfill-bench/backfill-bench/harness/render/traceplot"
)

// PlotSet is what the plots of a run or a compare are drawn from.
type PlotSet struct {
	Grid     *judge.Grid        // one column per variant
	ColNames []string           // the variants' names: persist=off, persist=on; or base, head
	Title    string             // "persist off vs on", "base vs head"
	Traces   [][]jobtrace.Trace // per variant
	Verdict  *judge.Verdict     // a compare's; nil in a run
}

// Plots draws every plot the set supports into dir/plots and returns the files'
// base names (without .png/.svg). A plot the data cannot support is skipped with
// the reason in skipped, not an error.
func Plots(dir string, ps PlotSet) (made, skipped []string, err error) {
	out := filepath.Join(dir, "plots")
	if err := os.MkdirAll(out, 0o755); err != nil {
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
	variants := traceplot.Variants{Names: ps.ColNames, Traces: ps.Traces}
	if len(variants.Traces) == 0 {
		variants.Traces = make([][]jobtrace.Trace, 1)
	}
	if ps.Verdict != nil {
		try("deltas", func(b string) error { return gridplot.Deltas(ps.Verdict, b) })
	}
	try("variants", func(b string) error { return gridplot.Variants(ps.Grid, ps.ColNames, ps.Title, b) })
	try("barrier-cdf", func(b string) error { return traceplot.BarrierCDF(variants, b) })
	try("bytes", func(b string) error { return gridplot.Bytes(ps.Grid, ps.ColNames, b) })
	try("timeline", func(b string) error {
		// The last variant (persist=on, or head) of the first cell group.
		last := variants.Traces[len(variants.Traces)-1]
		if len(last) == 0 {
			return errors.New("no traces")
		}
		first := last[0].Cell
		var same []jobtrace.Trace
		for _, t := range last {
			if t.Cell == first {
				same = append(same, t)
			}
		}
		return traceplot.Timeline(traceplot.Representative(same), b)
	})
	return made, skipped, nil
}
