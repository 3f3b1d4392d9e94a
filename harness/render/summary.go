// Package render shows results to people: the run summary, the verdict table,
// report.md and verdict.json, the table of every metric, and the plots.
package render

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/judge"
)

// SummaryGrid is how the summary and the run's plots group a run's results:
// a row per cell group, persist off and on as columns. With rounds (each result's,
// from the runner) off and on of one round are paired: they ran as a pair, at
// once or back to back.
func SummaryGrid(results []*benchfmt.Result, rounds []int, units benchfmt.UnitMetadataMap) (*judge.Grid, error) {
	if rounds != nil {
		tagged := make([]*benchfmt.Result, len(results))
		for i, r := range results {
			tagged[i] = r.Clone()
			tagged[i].SetConfig(judge.RoundKey, strconv.Itoa(rounds[i]))
		}
		results = tagged
	}
	return judge.NewGrid(judge.GridConfig{Col: contract.PairedDimension().Projection()}, results, units)
}

// WriteSummary prints, per cell group, each metric with persist off and on side by
// side: median ± 95 % CI and n, then the change with its p-value, "~" when the
// difference is not significant, and whether the change is better or worse.
func WriteSummary(w io.Writer, g *judge.Grid) error {
	if len(g.Tables) == 0 {
		_, err := fmt.Fprintln(w, "no results")
		return err
	}
	rows := g.Tables[0].Rows
	cols := g.Tables[0].Cols
	for _, t := range g.Tables[1:] {
		rows = mergeKeys(rows, t.Rows)
		cols = mergeKeys(cols, t.Cols)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for i, row := range rows {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintf(tw, "%s\n", contract.Label(row.StringValues()))
		fmt.Fprint(tw, "  metric")
		for _, c := range cols {
			fmt.Fprintf(tw, "\t%s", contract.Field{Dim: contract.PairedDimension().Name, Value: c.StringValues()})
		}
		if len(cols) > 1 {
			fmt.Fprintf(tw, "\t%s vs %s", cols[len(cols)-1].StringValues(), cols[0].StringValues())
		}
		fmt.Fprintln(tw)
		for _, t := range g.Tables {
			if !hasRow(t, row, cols) {
				continue // a table of another configuration (another profile's disk line)
			}
			fmt.Fprintf(tw, "  %s %s", t.Unit, arrow(t.Better))
			var last *judge.GridCell
			for _, c := range cols {
				cell := t.Cells[judge.GridKey{Row: row, Col: c}]
				last = cell
				if cell == nil {
					fmt.Fprint(tw, "\t—")
					continue
				}
				fmt.Fprintf(tw, "\t%s", formatStat(judge.StatOf(cell), t.Unit))
			}
			if len(cols) > 1 {
				fmt.Fprintf(tw, "\t%s", describeChange(last, t.Better))
			}
			fmt.Fprintln(tw)
		}
	}
	fmt.Fprintln(tw, legend)
	return tw.Flush()
}

// hasRow reports whether t has a cell in row.
func hasRow(t *judge.GridTable, row benchproc.Key, cols []benchproc.Key) bool {
	for _, c := range cols {
		if t.Cells[judge.GridKey{Row: row, Col: c}] != nil {
			return true
		}
	}
	return false
}

// describeChange renders a comparison cell. Paired (runs of one round back to
// back): the Hodges–Lehmann ratio with its interval, "+3.10% [+1.2%, +5.0%] (p=0.002)
// worse"; unpaired, as benchstat: "+3.10% (p=0.002) worse" or "~ (p=0.310)".
func describeChange(c *judge.GridCell, better int) string {
	if c == nil || c.Cmp == nil {
		return "—"
	}
	var s string
	d, p := 0.0, c.Cmp.P
	if ch := judge.CompareCells(c.Base, c); ch.Pairs > 0 {
		d, p = ch.Delta, ch.P
		s = fmt.Sprintf("%+.2f%%", 100*d)
		if ch.Lo != nil {
			s += fmt.Sprintf(" [%+.1f%%, %+.1f%%]", 100**ch.Lo, 100**ch.Hi)
		}
		s += fmt.Sprintf(" (p=%.3f, %d pairs)", p, ch.Pairs)
	} else {
		d, _ = c.Delta()
		s = fmt.Sprintf("%s (p=%.3f)", c.Cmp.FormatDelta(c.Base.Summary.Center, c.Summary.Center), p)
		if p == 0 { // an exact unit (no test can give 0): as benchstat, no p-value
			s = fmt.Sprintf("%s (%s)", c.Cmp.FormatDelta(c.Base.Summary.Center, c.Summary.Center), c.Cmp)
		}
	}
	if p <= c.Cmp.Alpha && d != 0 && better != 0 {
		if (d > 0) == (better > 0) {
			s += " better"
		} else {
			s += " worse"
		}
	}
	return s
}

func arrow(better int) string {
	switch {
	case better > 0:
		return "↑"
	case better < 0:
		return "↓"
	}
	return " "
}

// mergeKeys appends the keys of b missing from a, keeping a's order.
func mergeKeys(a, b []benchproc.Key) []benchproc.Key {
	seen := map[benchproc.Key]bool{}
	for _, k := range a {
		seen[k] = true
	}
	for _, k := range b {
		if !seen[k] {
			a = append(a, k)
			seen[k] = true
		}
	}
	return a
}
