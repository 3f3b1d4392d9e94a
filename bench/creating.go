package bench

import (
	"slices"

	"github.com/backfill-bench/backfill-bench/bench/pipeline"
	"github.com/backfill-bench/backfill-bench/contract"
)

// creatingMetrics are the upstream's and the creating job's barrier latencies, each
// over its regular barriers when it has at least contract.MinSteadyBarriers of them,
// and the creating job's epoch lag (contract/units_creating.go says what each means
// for each scan).
func creatingMetrics(r *pipeline.Result) []Metric {
	creating := r.Creating
	if creating == nil { // a coupled scan: the creating job's epochs are the upstream's
		creating = r.Epochs
	}
	var out []Metric
	if reg := r.Regular(); len(reg) >= contract.MinSteadyBarriers {
		out = append(out,
			Metric{pipeline.BarrierLatency(reg, 0.50).Seconds(), contract.UnitUpstreamP50},
			Metric{pipeline.BarrierLatency(reg, 0.99).Seconds(), contract.UnitUpstreamP99})
	}
	if len(creating) >= contract.MinSteadyBarriers+2 {
		reg := creating[1 : len(creating)-1]
		out = append(out,
			Metric{pipeline.BarrierLatency(reg, 0.50).Seconds(), contract.UnitCreatingP50},
			Metric{pipeline.BarrierLatency(reg, 0.99).Seconds(), contract.UnitCreatingP99})
	}
	lags := make([]float64, 0, len(r.Creating))
	for _, e := range r.Creating {
		lags = append(lags, float64(e.Lag))
	}
	var lagMax, lagP50 float64
	if len(lags) > 0 {
		slices.Sort(lags)
		lagMax, lagP50 = lags[len(lags)-1], contract.Quantile(lags, 0.5)
	}
	return append(out, Metric{lagMax, contract.UnitCreatingLagMax}, Metric{lagP50, contract.UnitCreatingLagP50})
}
