package harness

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/runner"
	"github.com/backfill-bench/backfill-bench/harness/spread"
	"github.com/backfill-bench/backfill-bench/internal/files"
)

// NoiseConfig configures `benchrun noise`: an A/A measurement of one build.
type NoiseConfig struct {
	Measure
	Output
	judge.Options // the thresholds name the metrics to report; alpha sizes the detectable change
	Out           string
	Force         bool   // replace Out if it holds an earlier run's output
	Binary        string // a built bench binary to use instead of building one
	CommandLine   []string
}

// Noise runs every cell of the matrix twice per round as a pair, on one build,
// and reports per judged metric the run-to-run spread, the spread of the paired
// ratio and the change a compare of that many rounds could detect: what this
// machine can resolve.
func Noise(ctx context.Context, cfg NoiseConfig) ([]spread.Row, error) {
	s, err := cfg.Measure.setup(cfg.logger())
	if err != nil {
		return nil, err
	}
	if err := cfg.Options.Validate(); err != nil {
		return nil, &ConfigError{err}
	}
	checkout, dir, err := checkoutDir(ctx, cfg.Src, cfg.Out, "noise", cfg.Force, cfg.CommandLine)
	if err != nil {
		return nil, err
	}
	binary, remove, err := benchBinary(ctx, cfg.logger(), checkout, dir, cfg.Binary, nil)
	if err != nil {
		return nil, err
	}
	defer remove()
	sides := []runner.Side{{Label: "a", Checkout: checkout, Binary: binary, File: "a.txt"}, {Label: "b", Checkout: checkout, Binary: binary, File: "b.txt"}}
	cells := cfg.Matrix.Cells()
	pass, err := runner.RunPass(ctx, s.passConfig(dir, "", cfg.Output), sides, runner.Plan(cells, cfg.Count, 2))
	if err == nil {
		err = pass.Err(ctx, dir)
	}
	if err != nil {
		return nil, err
	}
	v, g, err := judge.Compare(judge.Side{Results: pass.Results[0], Rounds: pass.Rounds[0]}, judge.Side{Results: pass.Results[1], Rounds: pass.Rounds[1]}, pass.Units, cfg.Options)
	if err != nil {
		return nil, err
	}
	rows := spread.Rows(v, g, cfg.Options)
	var out bytes.Buffer
	duet := slices.ContainsFunc(pass.Results[0], func(r *benchfmt.Result) bool { return r.GetConfig(contract.ConfigPairing) == string(runner.Duet) })
	spread.Write(&out, rows, cfg.Options, duet)
	fmt.Fprintf(&out, "\nresults: %s\n", dir)
	if err := files.WriteAtomic(filepath.Join(dir, "noise.txt"), out.Bytes()); err != nil {
		return rows, err
	}
	_, err = cfg.Stdout.Write(out.Bytes())
	return rows, err
}
