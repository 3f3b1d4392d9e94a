// Package spread measures how much each judged metric of an A/A compare moves
// between runs of one build: the table of benchrun noise.
package spread

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"text/tabwriter"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/stats"
)

// Row is one judged metric of one cell: how much it moves between runs.
type Row struct {
	Cell, Unit string
	N          int     // rounds
	RunCV      float64 // spread of single runs: standard deviation ÷ mean
	PairSD     float64 // spread of the per-round log ratio of a round's two runs
	PairCorr   float64 // correlation of the two runs of a round (NaN if unknown)
	Detectable float64 // smallest change a paired compare of N rounds finds with 90 % power; +Inf if none
	Rounds     int     // rounds a paired compare needs to detect a change of the threshold; 0 if it cannot
}

// Rows turns an A/A verdict into the spread of each judged pair.
func Rows(v *judge.Verdict, g *judge.Grid, o judge.Options) []Row {
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
	var rows []Row
	for _, f := range v.Findings {
		if f.Status == judge.NotJudged {
			continue
		}
		pair := cells[[2]string{f.Cell, f.Unit}]
		r := Row{Cell: f.Cell, Unit: f.Unit, N: f.Pairs, Detectable: math.Inf(1), PairCorr: math.NaN()}
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

// Write writes the table of rows and what it says: how much of their variance
// the runs of a round share. duet: the two runs of a round ran at once.
func Write(w *bytes.Buffer, rows []Row, o judge.Options, duet bool) {
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
