package harness

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"

	"github.com/backfill-bench/backfill-bench/bench"
	"github.com/backfill-bench/backfill-bench/bench/profile"
)

// writePlan prints what a run would do, for --dry-run.
func writePlan(w io.Writer, profiles []profile.Profile, set *profile.Set, cells []bench.Cell, runs []Run, shard Shard) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	rounds := 0
	if len(cells) > 0 {
		rounds = len(runs) / len(cells)
	}
	part := ""
	if shard.Count > 1 {
		part = fmt.Sprintf(" (shard %d of %d)", shard.Index, shard.Count)
	}
	estimate := 0.0
	for _, r := range runs {
		p, _ := set.Get(r.Cell.Profile)
		estimate += EstimateCost(r.Cell, p)
	}
	fmt.Fprintf(tw, "plan%s: %d cells × %d rounds = %d runs, one process each, every round running every cell once; about %v on 2 cores\n\n",
		part, len(cells), rounds, len(runs), time.Duration(estimate*float64(time.Second)).Round(time.Second))
	fmt.Fprintln(tw, "profiles:")
	for _, p := range profiles {
		fmt.Fprintf(tw, "  %s\t%s\n", p.Name, describeProfile(p))
	}
	fmt.Fprintln(tw, "\ncells (BenchmarkBackfill/…):")
	for i, c := range cells {
		fmt.Fprintf(tw, "  %d\t%s\n", i+1, c.Name())
	}
	if len(cells) > 0 {
		fmt.Fprintf(tw, "\neach run is the bench binary with, for cell 1:\n  %s -test.benchtime 1x -test.count 1 -trace FILE\n", quoteArgs(cells[0].Args()))
	}
	return tw.Flush()
}

// describeProfile lists a profile's knobs on one line.
func describeProfile(p profile.Profile) string {
	s := fmt.Sprintf("v%d\t%s\tcache %s\tmemtable %s\tcpus %s", p.Version, p.Disk(),
		profile.FormatBytes(p.BlockCache), profile.FormatBytes(p.MemTable), cpusOf(p))
	if p.Dir != "" {
		s += "\tdir " + p.Dir
	}
	return s
}

func cpusOf(p profile.Profile) string {
	if p.CPUs > 0 {
		return fmt.Sprint(p.CPUs)
	}
	return "all"
}

// ListProfiles writes every profile with every knob and its description.
func ListProfiles(w io.Writer, files []string) error {
	set, err := profile.NewSet(files)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tDISK\tCACHE\tMEMTABLE\tCPUS\tNIGHTLY\tSOURCE")
	for _, p := range set.All() {
		fmt.Fprintf(tw, "%s\tv%d\t%s\t%s\t%s\t%s\t%v\t%s\n", p.Name, p.Version, p.Disk(),
			profile.FormatBytes(p.BlockCache), profile.FormatBytes(p.MemTable), cpusOf(p), p.Nightly, p.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, p := range set.All() {
		fmt.Fprintf(w, "%s: %s\n", p.Name, p.Description)
	}
	fmt.Fprintln(w, "\nA profile of your own is a JSON file with these fields (see bench/profile/profiles/);\npass it with --profile-file FILE and name it in --profile.")
	return nil
}

// WriteSummary prints, per cell group, each metric with persist off and on side by
// side: median ± 95 % CI and n, then the change with its p-value, "~" when the
// difference is not significant, and whether the change is better or worse.
func WriteSummary(w io.Writer, results []*benchfmt.Result, units benchfmt.UnitMetadataMap) error {
	g, err := NewGrid(GridConfig{Row: ".fullname", Col: "/persist@(off on)"}, results, units)
	if err != nil {
		return err
	}
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
		fmt.Fprintf(tw, "%s\n", strings.TrimPrefix(row.StringValues(), "Backfill/"))
		fmt.Fprint(tw, "  metric")
		for _, c := range cols {
			fmt.Fprintf(tw, "\tpersist=%s", c.StringValues())
		}
		if len(cols) > 1 {
			fmt.Fprintf(tw, "\t%s vs %s", cols[len(cols)-1].StringValues(), cols[0].StringValues())
		}
		fmt.Fprintln(tw)
		for _, t := range g.Tables {
			fmt.Fprintf(tw, "  %s %s", t.Unit, arrow(t.Better))
			var last *GridCell
			for _, c := range cols {
				cell := t.Cells[GridKey{row, c}]
				last = cell
				if cell == nil {
					fmt.Fprint(tw, "\t—")
					continue
				}
				fmt.Fprintf(tw, "\t%s", formatStat(statOf(cell), t.Unit))
			}
			if len(cols) > 1 {
				fmt.Fprintf(tw, "\t%s", describeChange(last, t.Better))
			}
			fmt.Fprintln(tw)
		}
	}
	fmt.Fprintln(tw, "\n↑ higher is better, ↓ lower is better; ± is the 95 % confidence interval of the median;\n~ means the difference is not significant (Mann–Whitney U, p > 0.05).")
	return tw.Flush()
}

// describeChange renders a comparison cell: "+3.10% (p=0.002) worse" or "~ (p=0.310)".
func describeChange(c *GridCell, better int) string {
	if c == nil || c.Cmp == nil {
		return "—"
	}
	delta := c.Cmp.FormatDelta(c.Base.Summary.Center, c.Summary.Center)
	s := fmt.Sprintf("%s (p=%.3f)", delta, c.Cmp.P)
	if d, ok := c.Delta(); ok && c.Significant() && d != 0 && better != 0 {
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
