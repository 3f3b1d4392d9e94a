package main

import (
	"flag"
	"fmt"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/harness"
	"github.com/backfill-bench/backfill-bench/harness/judge"
)

// givenFlags are the flags set on the command line.
func givenFlags(fs *flag.FlagSet) map[string]bool {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	return given
}

// applySuite sets from the suite what no flag set: a suite first, then the flags.
// The matrix is the suite's from the built-in profiles and those of
// --profile-file, with the dimension flags applied over it; the profiles are
// returned.
func applySuite(fs *flag.FlagSet, s harness.Suite, m *harness.Measure, dims matrixFlags) (*profile.Set, error) {
	profiles, err := profile.NewSet(m.ProfileFiles)
	if err != nil {
		return nil, usageError{fmt.Errorf("--profile-file: %w", err)}
	}
	m.Matrix = s.Matrix(profiles)
	dims.apply(&m.Matrix)
	given := givenFlags(fs)
	for name, apply := range map[string]func(){
		"count":   func() { m.Count = s.Count },
		"timeout": func() { m.Timeout = s.Timeout },
		"pairing": func() { m.Pairing = s.Pairing },
		"measure": func() { m.By = s.By },
	} {
		if !given[name] {
			apply()
		}
	}
	return profiles, nil
}

// applyStatistics sets the suite's alpha and correction where no flag did, and its
// thresholds, over which --thresholds-file and then --threshold apply.
func applyStatistics(fs *flag.FlagSet, s harness.Suite, o *judge.Options, a *analysisFlags) error {
	given := givenFlags(fs)
	if !given["alpha"] {
		o.Alpha = s.Alpha
	}
	if !given["correction"] {
		o.Correction = s.Correction
	}
	o.Thresholds = s.Thresholds()
	return a.apply(o)
}

// applyCompare sets the suite's confirmation and budget where no flag did.
func applyCompare(fs *flag.FlagSet, s harness.Suite, cfg *harness.CompareConfig) {
	given := givenFlags(fs)
	if !given["confirm"] {
		cfg.Confirm = s.Confirm
	}
	if !given["budget"] {
		cfg.Budget = s.Budget
	}
}

// measuredSuite is the suite of a command whose default is s: the instruction
// suite's matrix, rounds and thresholds with --measure instructions.
func measuredSuite(s harness.Suite, by string) harness.Suite {
	if by != harness.MeasureInstructions {
		return s
	}
	c := harness.InstructionSuite()
	c.Confirm, c.Budget = s.Confirm, s.Budget
	return c
}
