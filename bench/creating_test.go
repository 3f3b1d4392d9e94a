package bench

import (
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/pipeline"
	"github.com/backfill-bench/backfill-bench/contract"
)

// creatingResult is a result with n upstream and n creating epochs of the given
// latencies, the creating ones lagging lag epochs.
func creatingResult(n int, upstream, creating time.Duration, lag int64) *pipeline.Result {
	r := &pipeline.Result{Wall: time.Second}
	for i := range n {
		r.Epochs = append(r.Epochs, pipeline.EpochTrace{Epoch: uint64(i + 2), Latency: upstream})
		r.Creating = append(r.Creating, pipeline.EpochTrace{Epoch: uint64(i + 1), Latency: creating, Lag: lag + int64(i%2)})
	}
	return r
}

func metricValues(r *pipeline.Result) map[string]float64 {
	out := map[string]float64{}
	for _, m := range creatingMetrics(r) {
		out[m.Unit] = m.Value
	}
	return out
}

// TestCreatingMetricsMoveTheRightWay: a slower creating job (its barriers 10× as
// slow, 5 more epochs of lag) worsens creating-barrier-* and creating-lag-* and
// leaves upstream-barrier-* as they were; a coupled scan's creating latency is its
// upstream's, its lag 0.
func TestCreatingMetricsMoveTheRightWay(t *testing.T) {
	n := contract.MinSteadyBarriers + 2
	base := metricValues(creatingResult(n, time.Millisecond, 2*time.Millisecond, 3))
	slow := metricValues(creatingResult(n, time.Millisecond, 20*time.Millisecond, 8))
	for _, u := range []string{contract.UnitCreatingP50, contract.UnitCreatingP99, contract.UnitCreatingLagMax, contract.UnitCreatingLagP50} {
		if !(slow[u] > base[u]) {
			t.Errorf("%s: %v → %v with a slower creating job, want worse (higher)", u, base[u], slow[u])
		}
	}
	for _, u := range []string{contract.UnitUpstreamP50, contract.UnitUpstreamP99} {
		if _, ok := base[u]; !ok || slow[u] != base[u] {
			t.Errorf("%s: %v → %v, want reported and unchanged", u, base[u], slow[u])
		}
	}
	if base[contract.UnitCreatingLagMax] != 4 || base[contract.UnitCreatingLagP50] != 3 {
		t.Errorf("lag max %v, p50 %v; want 4 and 3", base[contract.UnitCreatingLagMax], base[contract.UnitCreatingLagP50])
	}
	coupled := creatingResult(n, 7*time.Millisecond, 0, 0)
	coupled.Creating = nil
	c := metricValues(coupled)
	if c[contract.UnitCreatingP50] != c[contract.UnitUpstreamP50] || c[contract.UnitCreatingP50] == 0 || c[contract.UnitCreatingLagMax] != 0 {
		t.Errorf("coupled scan: %v", c)
	}
	for _, u := range contract.Units() {
		delete(base, u.Unit)
	}
	if len(base) > 0 {
		t.Errorf("units without a direction: %v", base)
	}
}
