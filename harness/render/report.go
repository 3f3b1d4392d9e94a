package render

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchunit"

	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/pprofdiff"
)

const legendVerdict = "✗ regression, ✓ improvement, ~ no regression (within the threshold), ? inconclusive (the interval reaches past the threshold), (✗) a regression the re-run did not confirm."

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
	case judge.Inconclusive:
		return "?"
	case judge.Unconfirmed:
		return "(✗)"
	}
	return "~"
}

// headline is the verdict in one line: what it found, how many pairs it could not
// settle, and the smallest change per metric it could have detected.
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
	verdict := map[judge.Status]string{judge.Regression: "✗ REGRESSION", judge.Inconclusive: "? INCONCLUSIVE", judge.NoRegression: "✓ no regression"}[v.Outcome()]
	if v.ExpectedRegression != "" {
		verdict = "✓ EXPECTED REGRESSION (" + v.ExpectedRegression + ")"
	}
	if judged == 0 {
		verdict = "✗ NOTHING JUDGED (no pair has a threshold; never a pass)"
	}
	if len(v.FailedInHead) > 0 {
		verdict += fmt.Sprintf(", %d cells failed in head", len(v.FailedInHead))
	}
	if len(v.Lost) > 0 {
		verdict += fmt.Sprintf(", %d cells with judged metrics on one side only", len(v.Lost))
	}
	s := fmt.Sprintf("%s: %d regressed, %d improved, %d inconclusive of %d judged (cell, metric) pairs; %s, α = %g",
		verdict, v.Regressions, improved, v.Inconclusive, judged, correctionName(v.Correction), v.Alpha)
	if d := detectableList(v); d != "" {
		s += "; detectable: " + d
	}
	return s
}

// detectableList is "rows/s 4.1%, sec/op 3.9%": per judged unit, the median over
// its cells of the smallest change the comparison could have detected.
func detectableList(v *judge.Verdict) string {
	units := map[string]bool{}
	for _, f := range v.Findings {
		if f.Status != judge.NotJudged {
			units[f.Unit] = true
		}
	}
	var parts []string
	for _, u := range slices.Sorted(maps.Keys(units)) {
		d, ok := v.Detectable[u]
		parts = append(parts, fmt.Sprintf("%s %s", u, formatPct(d, ok)))
	}
	return strings.Join(parts, ", ")
}

// formatPct renders a relative change, or ∞ when there is none (nothing detectable).
func formatPct(x float64, ok bool) string {
	if !ok {
		return "∞"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}

func formatDetectable(f judge.Finding) string {
	if f.Detectable == nil {
		return formatPct(0, false)
	}
	return formatPct(*f.Detectable, true)
}

// judgedFindings are the findings with a threshold, worst first: regressions, then
// unconfirmed and inconclusive ones, improvements, no regression; by cell and unit
// within each.
func judgedFindings(v *judge.Verdict) []judge.Finding {
	rank := map[judge.Status]int{judge.Regression: 0, judge.Unconfirmed: 1, judge.Inconclusive: 2, judge.Improvement: 3, judge.NoRegression: 4}
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

// formatDelta is the change with its 95 % interval: "-9.04% [-11.2%, -6.9%]"; an
// exact unit's exact change (its values repeated on each side: an interval of one
// point) as benchstat prints it, "0.00%" or "+5.00%".
func formatDelta(f judge.Finding) string {
	if f.FromZero {
		return "from 0"
	}
	if f.Base.Median == 0 && f.Pairs == 0 && f.Lo == nil { // zero on both sides has an interval: [0, 0]
		return "?"
	}
	if f.Exact && f.Lo != nil && f.Hi != nil && *f.Lo == *f.Hi { // as benchstat prints it
		if f.Delta == 0 {
			return "0.00%"
		}
		return fmt.Sprintf("%+.2f%%", 100*f.Delta)
	}
	s := fmt.Sprintf("%+.2f%%", 100*f.Delta)
	if f.Lo != nil && f.Hi != nil {
		s += fmt.Sprintf(" [%+.1f%%, %+.1f%%]", 100**f.Lo, 100**f.Hi)
	} else {
		s += " [no CI]"
	}
	return s
}

// testName says which test gave a finding's p-value and its change: paired, the
// Hodges–Lehmann per-round ratio (HL); unpaired, benchstat's ratio of medians.
func testName(f judge.Finding) string {
	switch {
	case f.Pairs > 0:
		return fmt.Sprintf("paired×%d HL", f.Pairs)
	case f.Exact:
		return "exact"
	}
	return "unpaired"
}

// WriteVerdictTable prints the verdict and every judged finding, benchstat style.
func WriteVerdictTable(w io.Writer, v *judge.Verdict) {
	fmt.Fprintf(w, "base %s vs head %s\n%s\n%s\n\n", v.Base, v.Head, headline(v), changeHeader)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\tcell\tmetric\tbase\thead\tchange [95% CI]\ttest\tp\tp adj.\tthreshold\tdetectable\t")
	for _, f := range judgedFindings(v) {
		fmt.Fprintf(tw, "%s\t%s\t%s %s\t%s\t%s\t%s\t%s\t%.3f\t%.3f\t%g%%\t%s\t%s\n", Mark(f.Status), f.Cell, f.Unit, arrow(f.Better),
			formatStat(f.Base, f.Unit), formatStat(f.Head, f.Unit), formatDelta(f), testName(f), f.P, f.PAdjusted, 100*f.Threshold, formatDetectable(f), f.Status)
	}
	tw.Flush()
	writeMissing(w, v, "")
	for _, n := range v.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintln(w, "\n"+legendVerdict+" Every metric, judged or not, is in metrics.txt.")
}

// changeHeader says what the change column is, above the table.
const changeHeader = "change: paired rows (test paired×n HL), the Hodges–Lehmann estimate of the per-round ratio, p from the Wilcoxon signed-rank test; unpaired rows, benchstat's ratio of medians, p from its Mann–Whitney U test (the interval: two-sample Hodges–Lehmann)"

// writeMissing lists what the tables leave out: the cells one side only has, the
// judged metrics lost, the jobs failed in head, the expected regression's reason
// and benchstat's warnings.
func writeMissing(w io.Writer, v *judge.Verdict, bullet string) {
	esc := func(s string) string {
		if bullet != "" { // markdown
			return Text(s)
		}
		return s
	}
	for _, c := range v.FailedInHead {
		fmt.Fprintf(w, "%sfailed in head (a regression): %s\n", bullet, esc(c))
	}
	for _, l := range v.Lost {
		fmt.Fprintf(w, "%sjudged on one side only (never a pass): %s\n", bullet, esc(l.String()))
	}
	if v.ExpectedRegression != "" {
		fmt.Fprintf(w, "%sexpected regression, let pass: %s\n", bullet, esc(v.ExpectedRegression))
	}
	for _, wn := range v.Warnings {
		fmt.Fprintf(w, "%sbenchstat warning: %s\n", bullet, esc(wn))
	}
	for _, m := range []struct {
		side  string
		names []string
	}{{"base", v.OnlyInBase}, {"head", v.OnlyInHead}} {
		for _, n := range m.names {
			fmt.Fprintf(w, "%smissing in %s, not compared: %s\n", bullet, map[string]string{"base": "head", "head": "base"}[m.side], esc(n))
		}
	}
}

// maxReportRows keeps report.md well inside a GitHub comment (65 536 characters).
const maxReportRows = 150

// WriteReport writes report.md: the verdict first, then the table, the cells only
// one side has, notes, the exact command and the machine (both already rendered).
func WriteReport(w io.Writer, v *judge.Verdict, command, machine string, plots []string) {
	writeVerdict(w, v, plots, func(p string) string { return "plots/" + p + ".png" })
	fmt.Fprintf(w, "Command: %s  \nMachine: %s\n", Code(command), machine)
}

// writeVerdict writes the report's body, up to its legend: plots are linked by
// plotURL(name).
func writeVerdict(w io.Writer, v *judge.Verdict, plots []string, plotURL func(string) string) {
	fmt.Fprintf(w, "## backfill-bench: %s vs %s\n\n**%s**\n\n%s.\n\n", Code(v.Base), Code(v.Head), Text(headline(v)), changeHeader)
	fmt.Fprintln(w, "| | cell | metric | base | head | change [95 % CI] | test | p (adj.) | threshold | detectable |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	findings := judgedFindings(v)
	for i, f := range findings {
		if i == maxReportRows {
			fmt.Fprintf(w, "\n… %d more rows in verdict.json\n", len(findings)-i)
			break
		}
		fmt.Fprintf(w, "| %s | %s | %s %s | %s | %s | %s | %s | %.3f | %g%% | %s |\n", Mark(f.Status), Code(f.Cell), Text(f.Unit), arrow(f.Better),
			formatStat(f.Base, f.Unit), formatStat(f.Head, f.Unit), formatDelta(f), testName(f), f.PAdjusted, 100*f.Threshold, formatDetectable(f))
	}
	fmt.Fprintln(w)
	writeMissing(w, v, "- ")
	for _, n := range v.Notes {
		fmt.Fprintf(w, "- note: %s\n", Text(n))
	}
	writeWhy(w, v.Why)
	if len(plots) > 0 {
		fmt.Fprint(w, "\n### Plots\n\n")
		for _, p := range plots {
			fmt.Fprintf(w, "![%s](%s)\n", p, plotURL(p))
		}
	}
	fmt.Fprintf(w, "\n%s A pair regresses only if its change is significant after %s correction over all judged pairs **and** beyond its threshold in the bad direction; it shows no regression only if its change's 95 %% interval stays inside the threshold on the bad side. Paired pairs (base and head of each round ran as a pair: at once in a duet, else back to back): the change is the Hodges–Lehmann estimate of the per-round ratio, p from the Wilcoxon signed-rank test; unpaired ones (results files): the ratio of the medians and p from the Mann–Whitney U test, as benchstat, with the two-sample Hodges–Lehmann interval of the ratio. Detectable: the smallest change found with 90 %% probability at the corrected level. All metrics: `metrics.txt`.\n\n",
		legendVerdict, correctionName(v.Correction))
}

// writeByteChanges renders a regressed cell's bytes by category, medians per side.
func writeByteChanges(w io.Writer, bytes []judge.ByteChange) {
	if len(bytes) == 0 {
		return
	}
	fmt.Fprint(w, "Bytes written in the job, by category (medians):\n\n| bytes | base | head | change |\n|---|---|---|---|\n")
	for _, b := range bytes {
		change := "new" // the base wrote none
		if b.Delta != nil {
			change = fmt.Sprintf("%+.2f%%", 100**b.Delta)
		}
		fmt.Fprintf(w, "| %s | %sB | %sB | %s |\n", Text(b.Unit), benchunit.Scale(b.Base, benchunit.Binary), benchunit.Scale(b.Head, benchunit.Binary), change)
	}
	fmt.Fprintln(w)
}

// writeWhy renders, per profiled regression, the functions that grew most: CPU in
// the job (flat, then cumulative), allocated bytes where allocations regressed, and
// the command that opens the diff.
func writeWhy(w io.Writer, whys []judge.Why) {
	for _, y := range whys {
		fmt.Fprintf(w, "\n### Why %s regressed\n\n", Code(y.Cell))
		writeByteChanges(w, y.Bytes)
		if y.Error != "" {
			fmt.Fprintf(w, "Not profiled: %s\n", Text(y.Error))
			continue
		}
		for _, d := range []struct {
			title string
			diff  *pprofdiff.Diff
			funcs func(*pprofdiff.Diff) []pprofdiff.Func
		}{
			{"CPU in the job, by own time (flat)", y.CPU, func(d *pprofdiff.Diff) []pprofdiff.Func { return d.Flat }},
			{"CPU in the job, with callees (cumulative)", y.CPU, func(d *pprofdiff.Diff) []pprofdiff.Func { return d.Cum }},
			{"bytes allocated (whole process), by own allocations", y.Heap, func(d *pprofdiff.Diff) []pprofdiff.Func { return d.Flat }},
			{"instructions in the job window (callgrind, mean per job), by own count", y.Instructions, func(d *pprofdiff.Diff) []pprofdiff.Func { return d.Flat }},
		} {
			if d.diff == nil {
				continue
			}
			class := benchunit.Decimal
			unit := "s"
			if d.diff.Unit == "bytes" {
				class, unit = benchunit.Binary, "B"
			}
			if d.diff.Unit == "instructions" {
				unit = ""
			}
			fmt.Fprintf(w, "%s: base %s%s, head %s%s\n\n| function | base | head | added |\n|---|---|---|---|\n", d.title,
				benchunit.Scale(d.diff.BaseTotal, class), unit, benchunit.Scale(d.diff.HeadTotal, class), unit)
			for _, f := range d.funcs(d.diff) {
				fmt.Fprintf(w, "| %s | %s%s | %s%s | +%s%s |\n", Code(f.Name), benchunit.Scale(f.Base, class), unit, benchunit.Scale(f.Head, class), unit, benchunit.Scale(f.Delta, class), unit)
			}
			fmt.Fprintln(w)
		}
		if len(y.Profiles) >= 2 {
			fmt.Fprintf(w, "%s (add `-tagfocus phase=job` for the job alone)\n", Code("go tool pprof -diff_base "+y.Profiles[0]+" "+y.Profiles[1]))
		}
	}
}
