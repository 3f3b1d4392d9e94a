package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/backfill-bench/backfill-bench/harness"
)

func runPlot(_ context.Context, stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	trend := fs.String("trend", "", "draw trends.png/.svg into this `directory` from the results files given as arguments, ordered by commit time")
	fs.Usage = func() {
		io.WriteString(fs.Output(), "usage: benchrun plot DIR\n       benchrun plot --trend OUT FILE...\n\nDraws the plots a results directory (benchrun run) or a compare directory\n(benchrun compare) supports into DIR/plots, as PNG and SVG; or the trend of\nmetrics over a series of results files.\n\n")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, stderr, args)
	if err != nil {
		return err
	}
	if *trend != "" {
		if len(pos) == 0 {
			return usageError{errors.New("plot --trend: want results files")}
		}
		made, err := harness.PlotTrendFiles(pos, *trend)
		if err != nil {
			return usageError{err}
		}
		for _, m := range made {
			fmt.Fprintf(stdout, "%s.png %s.svg\n", filepath.Join(*trend, m), filepath.Join(*trend, m))
		}
		return nil
	}
	if len(pos) != 1 {
		return usageError{errors.New("plot: want one directory")}
	}
	made, skipped, err := harness.PlotDir(pos[0])
	if err != nil {
		return usageError{err}
	}
	for _, m := range made {
		fmt.Fprintf(stdout, "%s.png %s.svg\n", m, m)
	}
	for _, s := range skipped {
		fmt.Fprintf(stderr, "skipped %s\n", s)
	}
	return nil
}
