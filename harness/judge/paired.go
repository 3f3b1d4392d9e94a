package judge

import "github.com/backfill-bench/backfill-bench/harness/stats"

// This file pairs two cells of a grid by round for the paired statistics (package stats).

// pairedLogRatios are log(head/base) of the rounds both sides ran; nil when a side
// has no rounds or a value is not positive (a ratio needs positive values), paired
// then says whether the cells did share rounds.
func pairedLogRatios(base, head *GridCell) (d []float64, paired bool) {
	b, h, paired := stats.PairedLogs(base.Rounds, base.Raw, head.Rounds, head.Raw)
	return stats.Differences(b, h), paired
}

// PairCorrelation is the correlation of two cells' log values paired by round
// (stats.Correlation).
func PairCorrelation(base, head *GridCell) float64 {
	b, h, _ := stats.PairedLogs(base.Rounds, base.Raw, head.Rounds, head.Raw)
	return stats.Correlation(b, h)
}

// PairedLogSD is the standard deviation of the per-round log ratio head/base of
// two cells of a grid (NaN without at least two pairs).
func PairedLogSD(base, head *GridCell) float64 {
	d, _ := pairedLogRatios(base, head)
	return stats.StdDev(d)
}
