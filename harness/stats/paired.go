package stats

import "math"

// PairedLogs are the logs of two samples' values paired by round (rounds[i] is
// the round of values[i]): nil without rounds, or if a value is not positive (a
// ratio needs positive values); paired says whether the samples share rounds.
func PairedLogs(baseRounds []int, base []float64, headRounds []int, head []float64) (b, h []float64, paired bool) {
	if baseRounds == nil || headRounds == nil {
		return nil, nil, false
	}
	byRound := map[int]float64{}
	for i, r := range baseRounds {
		byRound[r] = base[i]
	}
	for i, r := range headRounds {
		bv, ok := byRound[r]
		hv := head[i]
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

// Differences are h[i] − b[i].
func Differences(b, h []float64) []float64 {
	out := make([]float64, len(b))
	for i := range b {
		out[i] = h[i] - b[i]
	}
	return out
}

// Correlation is the correlation of paired values: near 1, the runs of a round
// move together (slow drift, which pairing cancels); near 0, each run has its own
// noise, which only more rounds average out. NaN with fewer than three pairs or
// a constant side.
func Correlation(b, h []float64) float64 {
	if len(b) < 3 {
		return math.NaN()
	}
	mb, mh := Mean(b), Mean(h)
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

// Binomial is n choose k, as a float.
func Binomial(n, k int) float64 {
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return c
}

// Logs are the logs of positive values; nil if one is not positive.
func Logs(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		if x <= 0 {
			return nil
		}
		out[i] = math.Log(x)
	}
	return out
}
