package render

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"golang.org/x/perf/benchunit"

	"github.com/backfill-bench/backfill-bench/harness/judge"
)

func correctionName(c string) string {
	return map[string]string{judge.Holm: "Holm–Bonferroni", judge.BH: "Benjamini–Hochberg"}[c]
}

// WriteVerdictJSON writes verdict.json's content.
func WriteVerdictJSON(w io.Writer, v *judge.Verdict) error {
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(js, '\n'))
	return err
}

// Mark is a finding's symbol in tables.
func Mark(status judge.Status) string {
	switch status {
	case judge.Regression:
		return "✗"
	case judge.Improvement:
		return "✓"
	case judge.Unconfirmed:
		return "?"
	}
	return "~"
}

// headline is the verdict in one line.
func headline(v *judge.Verdict) string {
	judged, improved := 0, 0
	for _, f := range v.Findings {
		if f.Status != judge.NotJudged {
			judged++
		}
		if f.Status == judge.Improvement {
			improved++
		}
	}
	method := correctionName(v.Correction)
	verdict := "✓ no regression"
	if v.Regression {
		verdict = "✗ REGRESSION"
	}
	return fmt.Sprintf("%s: %d regressed, %d improved of %d judged (cell, metric) pairs; %s, α = %g",
		verdict, v.Regressions, improved, judged, method, v.Alpha)
}

// judgedFindings are the findings with a threshold, worst first: regressions, then
// unconfirmed ones, improvements, no change; by cell and unit within each.
func judgedFindings(v *judge.Verdict) []judge.Finding {
	rank := map[judge.Status]int{judge.Regression: 0, judge.Unconfirmed: 1, judge.Improvement: 2, judge.NoChange: 3}
	var out []judge.Finding
	for _, f := range v.Findings {
		if f.Status != judge.NotJudged {
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return rank[out[i].Status] < rank[out[j].Status] })
	return out
}

func formatStat(s judge.Stat, unit string) string {
	return fmt.Sprintf("%s ± %s n=%d", benchunit.Scale(s.Median, benchunit.ClassOf(unit)), s.Summary().PctRangeString(), s.N)
}

func formatDelta(f judge.Finding) string {
	if f.Base.Median == 0 {
		return "?"
	}
	return fmt.Sprintf("%+.2f%%", 100*f.Delta)
}

// WriteVerdictTable prints the verdict and every judged finding, benchstat style.
func WriteVerdictTable(w io.Writer, v *judge.Verdict) {
	fmt.Fprintf(w, "base %s vs head %s\n%s\n\n", v.Base, v.Head, headline(v))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\tcell\tmetric\tbase\thead\tdelta\tp\tp adj.\tthreshold\t")
	for _, f := range judgedFindings(v) {
		fmt.Fprintf(tw, "%s\t%s\t%s %s\t%s\t%s\t%s\t%.3f\t%.3f\t%g%%\t%s\n", Mark(f.Status), f.Cell, f.Unit, arrow(f.Better),
			formatStat(f.Base, f.Unit), formatStat(f.Head, f.Unit), formatDelta(f), f.P, f.PAdjusted, 100*f.Threshold, f.Status)
	}
	tw.Flush()
	writeMissing(w, v, "")
	for _, n := range v.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintln(w, "\n✗ regression, ✓ improvement, ~ no change, ? not confirmed on re-run; every metric, judged or not, is in metrics.txt.")
}

func writeMissing(w io.Writer, v *judge.Verdict, bullet string) {
	for _, m := range []struct {
		side  string
		names []string
	}{{"base", v.OnlyInBase}, {"head", v.OnlyInHead}} {
		for _, n := range m.names {
			fmt.Fprintf(w, "%smissing in %s, not compared: %s\n", bullet, map[string]string{"base": "head", "head": "base"}[m.side], n)
		}
	}
}

// maxReportRows keeps report.md well inside a GitHub comment (65 536 characters).
const maxReportRows = 150

// WriteReport writes report.md: the verdict first, then the table, the cells only
// one side has, notes, the exact command and the machine (both already rendered).
func WriteReport(w io.Writer, v *judge.Verdict, command, machine string, plots []string) {
	fmt.Fprintf(w, "## backfill-bench: `%s` vs `%s`\n\n**%s**\n\n", v.Base, v.Head, headline(v))
	fmt.Fprintln(w, "| | cell | metric | base | head | Δ | p (adj.) | threshold |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	findings := judgedFindings(v)
	for i, f := range findings {
		if i == maxReportRows {
			fmt.Fprintf(w, "\n… %d more rows in verdict.json\n", len(findings)-i)
			break
		}
		fmt.Fprintf(w, "| %s | `%s` | %s %s | %s | %s | %s | %.3f | %g%% |\n", Mark(f.Status), f.Cell, f.Unit, arrow(f.Better),
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
	fmt.Fprintf(w, "\nA cell regresses only if its change is significant after %s correction over all judged pairs **and** beyond its threshold in the bad direction. Medians ± 95 %% CI; p from the Mann–Whitney U test, as benchstat. All metrics: `metrics.txt`.\n\n",
		correctionName(v.Correction))
	fmt.Fprintf(w, "Command: `%s`  \nMachine: %s\n", command, machine)
}
