package judge

import (
	"math"

	"github.com/backfill-bench/backfill-bench/harness/stats"
)

// This file pairs two cells of a grid by round for the paired statistics (package stats).

// pairedLogRatios are log(head/base) of the rounds both sides ran; nil when a side
// has no rounds or a value is not positive (a ratio needs positive values), paired
// then says whether the cells did share rounds.
func pairedLogRatios(base, head *GridCell) (d []float64, paired bool) {
	b, h, paired := pairedLogs(base, head)
	out := make([]float64, len(b))
	for i := range b {
		out[i] = h[i] - b[i]
	}
	return out, paired
}

// pairedLogs are the logs of the two cells' values, paired by round (nil without
// rounds, or if a value is not positive; paired says whether they share rounds).
func pairedLogs(base, head *GridCell) (b, h []float64, paired bool) {
	if base.Rounds == nil || head.Rounds == nil {
		return nil, nil, false
	}
	byRound := map[int]float64{}
	for i, r := range base.Rounds {
		byRound[r] = base.Raw[i]
	}
	for i, r := range head.Rounds {
		bv, ok := byRound[r]
		hv := head.Raw[i]
		if !ok {
			continue
		}
		if bv <= 0 || hv <= 0 {
			return nil, nil, true
		}
		b, h = append(b, math.Log(bv)), append(h, math.Log(hv))
	}
	return b, h, len(b) > 0
}

// PairCorrelation is the correlation of two cells' log values paired by round:
// near 1, the runs of a round move together (slow drift, which pairing cancels);
// near 0, each run has its own noise, which only more rounds average out. NaN
// with fewer than three pairs or a constant side.
func PairCorrelation(base, head *GridCell) float64 {
	b, h, _ := pairedLogs(base, head)
	if len(b) < 3 {
		return math.NaN()
	}
	mb, mh := stats.Mean(b), stats.Mean(h)
	var sbh, sbb, shh float64
	for i := range b {
		sbh += (b[i] - mb) * (h[i] - mh)
		sbb += (b[i] - mb) * (b[i] - mb)
		shh += (h[i] - mh) * (h[i] - mh)
	}
	if sbb == 0 || shh == 0 {
		return math.NaN()
	}
	return sbh / math.Sqrt(sbb*shh)
}

// PairedLogSD is the standard deviation of the per-round log ratio head/base of
// two cells of a grid (NaN without at least two pairs).
func PairedLogSD(base, head *GridCell) float64 {
	d, _ := pairedLogRatios(base, head)
	return stats.StdDev(d)
}
