package stats

import (
	"fmt"
	"slices"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/contract"
)

// ShortCells names the cells whose jobs had fewer regular barriers than a steady
// state needs, and says how to lengthen them: their steady-state figures (and so
// the pairs judged on them) are missing, which must not pass unnoticed.
func ShortCells(results []*benchfmt.Result) []string {
	var notes, seen []string
	for _, r := range results {
		c, ok := contract.CellOf(r)
		if !ok || slices.Contains(seen, c.Name()) {
			continue
		}
		for _, v := range r.Values {
			if v.Unit == contract.UnitBarriers && v.Value < contract.MinSteadyBarriers {
				seen = append(seen, c.Name())
				notes = append(notes, fmt.Sprintf("too short: %s had %.0f regular barriers, fewer than the %d a steady state needs, so it has no steady-state figures; lengthen it: more --rows, a shorter --barrier (like %drows), or a --limit on the scan",
					c.Name(), v.Value, contract.MinSteadyBarriers, max(c.Rows/(contract.MinSteadyBarriers+2), 1)))
			}
		}
	}
	return notes
}
