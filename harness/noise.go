package harness

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/runner"
	"github.com/backfill-bench/backfill-bench/harness/stats"
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

// NoiseRow is one judged metric of one cell: how much it moves between runs.
type NoiseRow struct {
	Cell, Unit string
	N          int     // rounds
	RunCV      float64 // spread of single runs: standard deviation ÷ mean
	PairSD     float64 // spread of the per-round log ratio of a round's two runs
	PairCorr   float64 // correlation of the two runs of a round (NaN if unknown)
	Detectable float64 // smallest change a paired compare of N rounds finds with 90 % power; +Inf if none
	Rounds     int     // rounds a paired compare needs to detect a change of the threshold; 0 if it cannot
}

// Noise runs every cell of the matrix twice per round as a pair, on one build,
// and reports per judged metric the run-to-run spread, the spread of the paired
// ratio and the change a compare of that many rounds could detect: what this
// machine can resolve.
func Noise(ctx context.Context, cfg NoiseConfig) ([]NoiseRow, error) {
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
	binary, remove, err := benchBinary(ctx, cfg.logger(), checkout, dir, cfg.Binary)
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
	rows := noiseRows(v, g, cfg.Options)
	var out bytes.Buffer
	duet := slices.ContainsFunc(pass.Results[0], func(r *benchfmt.Result) bool { return r.GetConfig(contract.ConfigPairing) == string(runner.Duet) })
	writeNoise(&out, rows, cfg.Options, duet)
	fmt.Fprintf(&out, "\nresults: %s\n", dir)
	if err := files.WriteAtomic(filepath.Join(dir, "noise.txt"), out.Bytes()); err != nil {
		return rows, err
	}
	_, err = cfg.Stdout.Write(out.Bytes())
	return rows, err
}

// noiseRows turns an A/A verdict into the spread of each judged pair.
func noiseRows(v *judge.Verdict, g *judge.Grid, o judge.Options) []NoiseRow {
	cells := map[[2]string][2]*judge.GridCell{}
	for _, t := range g.Tables {
		for _, row := range t.Rows {
			var pair [2]*judge.GridCell
			for i, col := range t.Cols {
				pair[i] = t.Cells[judge.GridKey{Row: row, Col: col}]
			}
			cells[[2]string{contract.Label(row.StringValues()), t.Unit}] = pair
		}
	}
	judged := 0
	for _, f := range v.Findings {
		if f.Status != judge.NotJudged {
			judged++
		}
	}
	var rows []NoiseRow
	for _, f := range v.Findings {
		if f.Status == judge.NotJudged {
			continue
		}
		pair := cells[[2]string{f.Cell, f.Unit}]
		r := NoiseRow{Cell: f.Cell, Unit: f.Unit, N: f.Pairs, Detectable: math.Inf(1), PairCorr: math.NaN()}
		if pair[0] != nil && pair[1] != nil {
			r.RunCV = stats.CV(append(append([]float64(nil), pair[0].Raw...), pair[1].Raw...))
			r.PairSD = judge.PairedLogSD(pair[0], pair[1])
			r.PairCorr = judge.PairCorrelation(pair[0], pair[1])
		}
		if f.Detectable != nil {
			r.Detectable = *f.Detectable
		}
		r.Rounds = stats.RoundsToDetect(r.PairSD, f.Threshold, o.Alpha/float64(max(judged, 1)))
		rows = append(rows, r)
	}
	return rows
}

func writeNoise(w *bytes.Buffer, rows []NoiseRow, o judge.Options, duet bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "cell\tmetric\tn\trun CV\tpaired ratio sd\tpair corr\tdetectable now\tthreshold\trounds for it\t")
	var corrs []float64 // of the metrics that move at all
	for _, r := range rows {
		det, rounds, corr := "∞", "—", "—"
		if !math.IsNaN(r.PairCorr) {
			corr = fmt.Sprintf("%+.2f", r.PairCorr)
			if r.PairSD > minDiagnosedSD {
				corrs = append(corrs, r.PairCorr)
			}
		}
		if !math.IsInf(r.Detectable, 0) {
			det = fmt.Sprintf("%.1f%%", 100*r.Detectable)
		}
		if r.Rounds > 0 {
			rounds = fmt.Sprint(r.Rounds)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f%%\t%.1f%%\t%s\t%s\t%g%%\t%s\t\n", r.Cell, r.Unit, r.N, 100*r.RunCV, 100*r.PairSD, corr, det, 100*o.Thresholds[r.Unit], rounds)
	}
	tw.Flush()
	how := "back to back"
	if duet {
		how = "at once (a duet: each on half the CPUs, trading them every 20 ms)"
	}
	fmt.Fprintf(w, "\nEvery cell ran twice per round, %s, on one build: an A/A compare. run CV is the spread of single runs; paired ratio sd the spread of the per-round log ratio, which the paired test sees; pair corr how much the two runs of a round move together. detectable now: the smallest change a compare of n rounds finds with 90 %% power at α = %g corrected over the %d judged pairs; rounds for it: the rounds a compare needs to detect a change of the threshold.\n", how, o.Alpha, len(rows))
	if len(corrs) > 0 {
		slices.Sort(corrs)
		n := len(corrs)
		med := (corrs[(n-1)/2] + corrs[n/2]) / 2
		fmt.Fprintf(w, "\nThe two runs of a round share %.0f %% of their variance (median pair corr %+.2f over %d varying metrics): pairing cancels that part, a drift of the machine; the rest is each run's own noise, which more rounds average out (larger epochs lower it per round, but a cell needs 100 barriers, so they cost more rows and time per run).\n", 100*max(med, 0), med, len(corrs))
	}
}

// minDiagnosedSD is the paired spread below which a metric counts as not moving
// (bytes and allocations of work-driven cells): its correlation says nothing.
const minDiagnosedSD = 0.005
