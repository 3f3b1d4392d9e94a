package main

import (
	"context"
	"flag"
	"io"

	"github.com/backfill-bench/backfill-bench/harness/comment"
)

func runComment(_ context.Context, _, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("comment", flag.ContinueOnError)
	var cfg comment.Config
	fs.StringVar(&cfg.Verdict, "verdict", "", "the run's verdict.json (`file`; required)")
	fs.StringVar(&cfg.Out, "out", "", "where the comment's markdown goes (`file`; required)")
	fs.StringVar(&cfg.Plots, "plots", "", "the run's plots `directory` of PNGs, checked before they are copied to --plots-out")
	fs.StringVar(&cfg.PlotsOut, "plots-out", "", "where the PNGs that pass the checks go (`directory`)")
	fs.StringVar(&cfg.PlotsURL, "plots-url", "", "the https `URL` the checked PNGs are served under")
	fs.StringVar(&cfg.Changed, "changed", "", "a `file` of the PR's changed paths, one a line: changes under ci/ or .github/ mark the comment unverified")
	fs.StringVar(&cfg.RunURL, "run-url", "", "the measuring run's https `URL`, linked in the comment")
	fs.StringVar(&cfg.Check, "check", "", "where the check run's JSON (conclusion, title, summary) goes (`file`)")
	fs.Usage = func() {
		io.WriteString(fs.Output(), `usage: benchrun comment --verdict verdict.json --out comment.md [flags]

Renders a PR's benchmark comment from a run's verdict.json, which the run of the
PR's code wrote: the file is checked against its schema and size limits, every
value is escaped for markdown and HTML and @-mentions are broken; plots are
copied only if they are PNGs within limits. The check run concludes failure for a
regression, neutral (with the headline) for an inconclusive or unverified verdict
or one that judged nothing, success otherwise.

`)
		fs.PrintDefaults()
	}
	if err := parse(fs, stderr, args); err != nil {
		return err
	}
	err := usageOf(comment.Run(cfg))
	if err != nil && exitCode(err) != 2 {
		return exitError{2, err} // a refused artifact: an error, not a verdict
	}
	return err
}
