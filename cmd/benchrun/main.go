// Command benchrun drives backfill-bench: run `benchrun help` for its subcommands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/backfill-bench/backfill-bench/harness"
	"github.com/backfill-bench/backfill-bench/internal/usage"
)

func main() {
	// SIGINT (^C) and SIGTERM (how CI and Kubernetes cancel) take the same path:
	// runs stop, children are interrupted and waited for, temporary binaries and
	// worktrees are removed, finished results stay. A second signal exits at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // the default action again: the next signal ends the process
	}()
	err := run(ctx, os.Stdout, os.Stderr, os.Args[1:])
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "benchrun:", err)
		}
		os.Exit(exitCode(err))
	}
}

// usageError marks a bad command line: exit status 2.
type usageError struct{ error }

// exitError carries an exit status of its own.
type exitError struct {
	code int
	error
}

func (e exitError) Unwrap() error { return e.error }

func exitCode(err error) int {
	var u usageError
	var x exitError
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0 // `benchrun SUBCMD --help` asked for the usage it printed
	case errors.As(err, &x):
		return x.code
	case errors.As(err, &u):
		return 2
	}
	return 1
}

type command struct {
	name, summary string
	run           func(ctx context.Context, stdout, stderr io.Writer, args []string) error
}

func commands() []command {
	return []command{
		{"run", "run the benchmark matrix (default: the quick suite) into a results directory", runRun},
		{"compare", "compare two commits (or results) with statistics and a regression verdict", runCompare},
		{"bisect", "find the first commit between a good and a bad one that regresses on given cells", runBisect},
		{"noise", "measure what this machine can resolve: each cell's run-to-run and paired spread, an A/A compare", runNoise},
		{"comment", "render a PR's benchmark comment from a run's verdict.json, escaped, with its plots checked", runComment},
		{"nightly", "run the nightly matrix, record it in the history, detect change points", runNightly},
		{"merge", "combine results files (of shards) into one", runMerge},
		{"plot", "draw the plots of a results or compare directory", runPlot},
		{"site", "write a static dashboard of the nightly history", runSite},
		{"fit", "fit the cost model to results of several table sizes", runFit},
		{"predict", "predict a larger job's time, rows/s and persistence overhead from a fitted model", runPredict},
		{"crashtest", "cut the power at random points of small jobs and check every recovery", runCrashTest},
		{"profiles", "list hardware profiles with every knob", runProfiles},
		{"workloads", "list workloads: tables, key distributions, change mixes", runWorkloads},
		{"gen", "print sample rows of a workload", runGen},
	}
}

func run(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stdout, "usage: benchrun <command> [flags]\n\ncommands:")
		for _, c := range commands() {
			fmt.Fprintf(stdout, "  %-10s %s\n", c.name, c.summary)
		}
		fmt.Fprintln(stdout, "\nRun `benchrun <command> -h` for a command's flags. `make bench` is `benchrun run`.")
		if len(args) == 0 {
			return usageError{errors.New("no command given")}
		}
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, stdout, stderr, args[1:])
		}
	}
	return usageError{fmt.Errorf("unknown command %q: run `benchrun help`", args[0])}
}

// usageOf turns the harness's configuration errors into usage errors (exit 2).
func usageOf(err error) error {
	var c *harness.ConfigError
	var u *usage.Error
	if errors.As(err, &c) || errors.As(err, &u) {
		return usageError{err}
	}
	return err
}

// parse parses a subcommand's flags, turning flag errors into usage errors.
func parse(fs *flag.FlagSet, stderr io.Writer, args []string) error {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("%s: unexpected arguments %q", fs.Name(), fs.Args())}
	}
	return nil
}
