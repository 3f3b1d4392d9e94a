package main

import (
	"context"
	"flag"
	"io"

	"github.com/backfill-bench/backfill-bench/workloads"
)

func runWorkloads(_ context.Context, stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("workloads", flag.ContinueOnError)
	if err := parse(fs, stderr, args); err != nil {
		return err
	}
	return workloads.WriteList(stdout)
}

func runGen(_ context.Context, stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	var cfg workloads.GenConfig
	fs.StringVar(&cfg.Workload, "workload", "narrow", "workload spec: table[+keys][+mix] (see `benchrun workloads`)")
	fs.IntVar(&cfg.Rows, "rows", 5, "rows to print")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed; the same seed prints the same rows on any machine")
	fs.StringVar(&cfg.Format, "format", "table", "output format: table, csv or json")
	if err := parse(fs, stderr, args); err != nil {
		return err
	}
	if err := workloads.Gen(stdout, cfg); err != nil {
		return usageError{err}
	}
	return nil
}
