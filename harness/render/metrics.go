package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/judge"
)

// WriteMetrics prints every metric of a grid, judged or not, in benchstat's layout:
// a table per unit and configuration, a row per cell, the median ± 95 % CI of each
// column and the change of the last column against the first with its p-value.
// reproduce is the benchstat command that gives the same numbers.
func WriteMetrics(w io.Writer, g *judge.Grid, reproduce string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for i, t := range g.Tables {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		if cfg := t.Key.String(); cfg != ".unit:"+t.Unit {
			fmt.Fprintf(tw, "%s\n", cfg)
		}
		fmt.Fprintf(tw, "\t%s %s", t.Unit, arrow(t.Better))
		for _, c := range t.Cols {
			fmt.Fprintf(tw, "\t%s", c.StringValues())
		}
		if len(t.Cols) > 1 {
			fmt.Fprint(tw, "\tvs "+t.Cols[0].StringValues())
		}
		fmt.Fprintln(tw)
		for _, row := range t.Rows {
			fmt.Fprintf(tw, "\t%s", contract.Label(row.StringValues()))
			var last *judge.GridCell
			for _, c := range t.Cols {
				last = t.Cells[judge.GridKey{Row: row, Col: c}]
				if last == nil {
					fmt.Fprint(tw, "\t—")
					continue
				}
				fmt.Fprintf(tw, "\t%s", formatStat(judge.StatOf(last), t.Unit))
			}
			if len(t.Cols) > 1 {
				fmt.Fprintf(tw, "\t%s", describeChange(last, t.Better))
			}
			fmt.Fprintln(tw)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%s\nThe same numbers: %s\n", strings.TrimSpace(legend), reproduce)
	return err
}

const legend = `
↑ higher is better, ↓ lower is better; ± is the 95 % confidence interval of the median;
~ means the difference is not significant (Mann–Whitney U, p > 0.05). Where runs were
paired by round, the change is the Hodges–Lehmann per-round ratio with its 95 % interval
and p is from the Wilcoxon signed-rank test.`
