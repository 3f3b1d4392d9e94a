package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/backfill-bench/backfill-bench/harness/judge"
)

// Comment is what a PR comment shows beside the verdict; every field has been
// checked by the caller (plot names and URLs are its own, not the run's).
type Comment struct {
	Plots      []string // plot names whose PNGs were checked, served under PlotsURL
	PlotsURL   string
	Unverified []string // the PR's changed files under ci/ or .github/
	RunURL     string   // the run that measured, for the reader
}

// WriteComment writes a PR comment of the verdict: the report's body with every
// value escaped, the plots linked by absolute URL, and, when the PR changed the
// benchmark's own CI (its run ran that CI and could have written any verdict), a
// warning that it is unverified first.
func WriteComment(w io.Writer, v *judge.Verdict, c Comment) {
	if len(c.Unverified) > 0 {
		var names []string
		for _, f := range c.Unverified {
			names = append(names, Code(f))
		}
		fmt.Fprintf(w, "> [!CAUTION]\n> **Unverified**: this PR changes the benchmark's own CI (%s), and the run below ran with those changes: its verdict may have been written by the PR rather than measured. A maintainer should compare it again from the base branch (`ci/pr-compare.sh`).\n\n",
			strings.Join(names, ", "))
	}
	writeVerdict(w, v, c.Plots, func(p string) string { return c.PlotsURL + "/" + p + ".png" })
	fmt.Fprint(w, "Rendered from the run's `verdict.json` by the base branch's `benchrun comment`")
	if c.RunURL != "" {
		fmt.Fprintf(w, "; the run: %s", c.RunURL)
	}
	fmt.Fprintln(w, ".")
}

// CheckRun is the body of a GitHub check run that carries the verdict (the
// caller adds its name and commit).
type CheckRun struct {
	Status     string         `json:"status"`
	Conclusion string         `json:"conclusion"`
	Output     CheckRunOutput `json:"output"`
}

// CheckRunOutput is a check run's title (plain text) and summary (markdown).
type CheckRunOutput struct {
	Title   string `json:"title"`
	Summary string `json:"summary"`
}

// NewCheckRun concludes a check from the verdict: failure for a regression;
// neutral, with the headline as its reason, for an inconclusive verdict, one that
// judged nothing, or an unverified one (a pass a PR could have written is not a
// pass); success only for no regression over judged pairs.
func NewCheckRun(v *judge.Verdict, unverified bool) CheckRun {
	judged := 0
	for _, f := range v.Findings {
		if f.Status != judge.NotJudged {
			judged++
		}
	}
	title := headline(v)
	conclusion := map[judge.Status]string{judge.Regression: "failure", judge.Inconclusive: "neutral", judge.NoRegression: "success"}[v.Outcome()]
	switch {
	case conclusion == "failure":
	case judged == 0:
		conclusion, title = "neutral", "nothing judged: "+title
	case unverified:
		conclusion, title = "neutral", "unverified (the PR changes ci/ or .github/): "+title
	}
	title = strings.Map(func(r rune) rune {
		if hidden(r) {
			return -1
		}
		return r
	}, title)
	if r := []rune(title); len(r) > 250 {
		title = string(r[:249]) + "…"
	}
	summary := "**" + Text(title) + "**\n\nThe table is in the PR's benchmark comment."
	return CheckRun{Status: "completed", Conclusion: conclusion, Output: CheckRunOutput{Title: title, Summary: summary}}
}
