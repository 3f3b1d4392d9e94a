package harness

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchunit"
)

// mark is a finding's symbol in tables.
func mark(status string) string {
	switch status {
	case Regression:
		return "✗"
	case Improvement:
		return "✓"
	case Unconfirmed:
		return "?"
	}
	return "~"
}

// headline is the verdict in one line.
func headline(v *Verdict) string {
	judged, improved := 0, 0
	for _, f := range v.Findings {
		if f.Status != NotJudged {
			judged++
		}
		if f.Status == Improvement {
			improved++
		}
	}
	method := map[string]string{Holm: "Holm–Bonferroni", BH: "Benjamini–Hochberg"}[v.Correction]
	verdict := "✓ no regression"
	if v.Regression {
		verdict = "✗ REGRESSION"
	}
	return fmt.Sprintf("%s: %d regressed, %d improved of %d judged (cell, metric) pairs; %s, α = %g",
		verdict, v.Regressions, improved, judged, method, v.Alpha)
}

// judgedFindings are the findings with a threshold, worst first: regressions, then
// unconfirmed ones, improvements, no change; by cell and unit within each.
func judgedFindings(v *Verdict) []Finding {
	rank := map[string]int{Regression: 0, Unconfirmed: 1, Improvement: 2, NoChange: 3}
	var out []Finding
	for _, f := range v.Findings {
		if f.Status != NotJudged {
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return rank[out[i].Status] < rank[out[j].Status] })
	return out
}

func formatStat(s Stat, unit string) string {
	return fmt.Sprintf("%s ± %s n=%d", benchunit.Scale(s.Median, benchunit.ClassOf(unit)), s.summary().PctRangeString(), s.N)
}

func formatDelta(f Finding) string {
	if f.Base.Median == 0 {
		return "?"
	}
	return fmt.Sprintf("%+.2f%%", 100*f.Delta)
}

func cellLabel(name string) string { return strings.TrimPrefix(name, "Backfill/") }

// WriteVerdictTable prints the verdict and every judged finding, benchstat style.
func WriteVerdictTable(w io.Writer, v *Verdict) {
	fmt.Fprintf(w, "base %s vs head %s\n%s\n\n", v.Base, v.Head, headline(v))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\tcell\tmetric\tbase\thead\tdelta\tp\tp adj.\tthreshold\t")
	for _, f := range judgedFindings(v) {
		fmt.Fprintf(tw, "%s\t%s\t%s %s\t%s\t%s\t%s\t%.3f\t%.3f\t%g%%\t%s\n", mark(f.Status), cellLabel(f.Cell), f.Unit, arrow(f.Better),
			formatStat(f.Base, f.Unit), formatStat(f.Head, f.Unit), formatDelta(f), f.P, f.PAdjusted, 100*f.Threshold, f.Status)
	}
	tw.Flush()
	writeMissing(w, v, "")
	for _, n := range v.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintln(w, "\n✗ regression, ✓ improvement, ~ no change, ? not confirmed on re-run; every metric, judged or not, is in benchstat.txt.")
}

func writeMissing(w io.Writer, v *Verdict, bullet string) {
	for _, m := range []struct {
		side  string
		names []string
	}{{"base", v.OnlyInBase}, {"head", v.OnlyInHead}} {
		for _, n := range m.names {
			fmt.Fprintf(w, "%smissing in %s, not compared: %s\n", bullet, map[string]string{"base": "head", "head": "base"}[m.side], cellLabel(n))
		}
	}
}

// maxReportRows keeps report.md well inside a GitHub comment (65 536 characters).
const maxReportRows = 150

// WriteReport writes report.md: the verdict first, then the table, the cells only
// one side has, notes, the exact command and the machine.
func WriteReport(w io.Writer, v *Verdict, commandLine []string, m Machine, plots []string) {
	fmt.Fprintf(w, "## backfill-bench: `%s` vs `%s`\n\n**%s**\n\n", v.Base, v.Head, headline(v))
	fmt.Fprintln(w, "| | cell | metric | base | head | Δ | p (adj.) | threshold |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	findings := judgedFindings(v)
	for i, f := range findings {
		if i == maxReportRows {
			fmt.Fprintf(w, "\n… %d more rows in verdict.json\n", len(findings)-i)
			break
		}
		fmt.Fprintf(w, "| %s | `%s` | %s %s | %s | %s | %s | %.3f | %g%% |\n", mark(f.Status), cellLabel(f.Cell), f.Unit, arrow(f.Better),
			formatStat(f.Base, f.Unit), formatStat(f.Head, f.Unit), formatDelta(f), f.PAdjusted, 100*f.Threshold)
	}
	fmt.Fprintln(w)
	writeMissing(w, v, "- ")
	for _, n := range v.Notes {
		fmt.Fprintf(w, "- note: %s\n", n)
	}
	if len(plots) > 0 {
		fmt.Fprint(w, "\n### Plots\n\n")
		for _, p := range plots {
			fmt.Fprintf(w, "![%s](plots/%s.png)\n", p, p)
		}
	}
	fmt.Fprintf(w, "\nA cell regresses only if its change is significant after %s correction over all judged pairs **and** beyond its threshold in the bad direction. Medians ± 95 %% CI; p from the Mann–Whitney U test, as benchstat. All metrics: `benchstat.txt`.\n\n",
		map[string]string{Holm: "Holm–Bonferroni", BH: "Benjamini–Hochberg"}[v.Correction])
	fmt.Fprintf(w, "Command: `%s`  \nMachine: `%s`, %s, %d cores, %s\n", quoteArgs(commandLine), m.Fingerprint, m.CPU, m.Cores, m.OS)
}
