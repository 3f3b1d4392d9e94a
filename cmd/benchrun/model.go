package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/backfill-bench/backfill-bench/contract/rates"
	"github.com/backfill-bench/backfill-bench/harness/costmodel"
	"github.com/backfill-bench/backfill-bench/harness/fit"
)

func runFit(_ context.Context, stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("fit", flag.ContinueOnError)
	out := fs.String("out", "", "where the model goes (`file`; default model.json beside the first RESULTS file); an earlier model there is replaced, any other file refused")
	fs.Usage = func() {
		io.WriteString(fs.Output(), "usage: benchrun fit [--out FILE] RESULTS...\n\nFits the cost model (a per-row cost, one that grows with the table's size, a\nper-epoch and a per-persisted-epoch cost) to backfill results of one profile,\nworkload, scan and par, with 95 % bootstrap intervals, and saves it beside the\nresults (model.json, with scale.png and .svg) unless --out says where.\n\n")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, stderr, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageError{errors.New("fit: want results files")}
	}
	return usageOf(fit.Fit(stdout, pos, *out))
}

func runPredict(_ context.Context, stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("predict", flag.ContinueOnError)
	model := fs.String("model", "", "the model `file` benchrun fit wrote (required: fit saves model.json beside its results)")
	rows := fs.Float64("rows", 0, "rows of the table (required)")
	barrier := fs.String("barrier", "1s", "barriers: an interval (1s) or snapshot rows per epoch (50krows)")
	persist := fs.String("persist", "off", "on or off")
	vnodes := fs.Int("vnodes", 256, "vnodes, whose state rows a persisted epoch writes")
	par := fs.Int("par", 0, "backfill actors: must be the model's (0: the model's)")
	fs.Usage = func() {
		io.WriteString(fs.Output(), "usage: benchrun predict --model model.json --rows N [--barrier 1s] [--persist on|off] [--vnodes V] [--par P]\n\nPredicts a job's time, rows/s and epochs with 95 % intervals (and, with\npersist on, its overhead), refusing what the model cannot extrapolate to.\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, stderr, args); err != nil {
		return err
	}
	if *model == "" {
		return usageError{errors.New("predict: --model: want the model benchrun fit wrote (by default model.json beside the results it fitted)")}
	}
	if *persist != "on" && *persist != "off" {
		return usageError{errors.New("predict: --persist: want on or off")}
	}
	cad, err := rates.ParseCadence(*barrier)
	if err != nil {
		return usageError{fmt.Errorf("predict: --barrier: %w", err)}
	}
	q := costmodel.Query{Rows: *rows, Barrier: cad.Interval.Seconds(), EpochRows: float64(cad.Rows), Vnodes: float64(*vnodes), Persist: *persist == "on"}
	if *par < 0 {
		return usageError{errors.New("predict: --par: want ≥ 0")}
	}
	return usageOf(fit.Predict(stdout, *model, q, *par))
}
