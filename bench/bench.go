// Package bench turns a backfill job's result into the benchfmt metrics and the trace
// its cell reports; the benchmarks themselves are in its tests.
package bench

import (
	"github.com/backfill-bench/backfill-bench/bench/meterfs"
	"github.com/backfill-bench/backfill-bench/bench/pipeline"
	"github.com/backfill-bench/backfill-bench/contract"
)

// Metric is one reported value.
type Metric struct {
	Value float64
	Unit  string
}

// Metrics returns what a backfill job reports. ns/op is the job's wall time from the
// first epoch to the final commit, replacing the testing package's own timing.
func Metrics(r *pipeline.Result) []Metric {
	out := []Metric{
		{float64(r.Wall.Nanoseconds()), contract.UnitNsPerOp},
		{r.RowsPerSec(), contract.UnitRowsPerSec},
		{r.BarrierLatency(0.50).Seconds(), contract.UnitBarrierP50},
		{r.BarrierLatency(0.99).Seconds(), contract.UnitBarrierP99},
		{r.BarrierLatency(1).Seconds(), contract.UnitBarrierMax},
		{r.WriteAmp(), contract.UnitWriteAmp},
		{ratio(r.Logical.State, r.Logical.MV), contract.UnitStatePerMV},
		{ratio(int64(r.CPU), r.Rows()) / 1e9, contract.UnitCPUPerRow},
		{float64(r.Logical.Total()), contract.UnitLogicalPerOp},
	}
	for _, c := range meterfs.Categories() {
		out = append(out, Metric{float64(r.FS.Bytes[c]), contract.FSUnit(c.String())})
	}
	return out
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
