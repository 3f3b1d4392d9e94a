package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/backfill-bench/backfill-bench/harness/site"
)

func runSite(_ context.Context, stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("site", flag.ContinueOnError)
	var cfg site.Config
	fs.StringVar(&cfg.History, "history", "results/history", "the nightly history `directory` (a directory per machine)")
	fs.StringVar(&cfg.Out, "out", "", "where the pages go (`directory`; required)")
	fs.StringVar(&cfg.CommitURL, "commit-url", "", "a commit's web page, with %s for the commit, e.g. https://github.com/OWNER/REPO/commit/%s")
	fs.Usage = func() {
		io.WriteString(fs.Output(), "usage: benchrun site --history DIR --out DIR\n\nWrites a static dashboard of the nightly history: index.html and, per machine\nand profile, a page with the trend of every judged metric of every cell (median\nand 95 % band per night, change points marked, each night linked to its report).\nThe pages need no server and no network.\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, stderr, args); err != nil {
		return err
	}
	rep, err := site.Run(cfg)
	if err != nil {
		return usageOf(err)
	}
	for _, s := range rep.Skipped {
		fmt.Fprintln(stderr, s)
	}
	for _, p := range rep.Pages {
		fmt.Fprintln(stdout, p)
	}
	return nil
}
