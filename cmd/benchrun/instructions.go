package main

import (
	"flag"

	"github.com/backfill-bench/backfill-bench/harness"
	"github.com/backfill-bench/backfill-bench/harness/judge"
)

// countedDefaults are compare's defaults with --measure instructions, where the
// flags were not given: the suite of instructions, its rounds, the thresholds of
// counts (instructions/row at 1 %, no wall-clock unit), and no confirmation
// re-run: a busy machine does not move counts, so a re-run would only repeat them.
func countedDefaults(fs *flag.FlagSet, cfg *harness.CompareConfig) {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	cfg.Matrix = harness.InstructionMatrix() // the dimension flags given apply over it
	if !given["count"] {
		cfg.Count = harness.InstructionCount
	}
	if !given["confirm"] {
		cfg.Confirm = 0
	}
	cfg.Options.Thresholds = judge.InstructionThresholds() // the files and lists of thresholds apply over them
}
