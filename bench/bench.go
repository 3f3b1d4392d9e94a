// Package bench turns a backfill job's result into the benchfmt metrics and the trace
// its cell reports; the benchmarks themselves are in its tests.
package bench

import (
	"github.com/backfill-bench/backfill-bench/bench/meterfs"
	"github.com/backfill-bench/backfill-bench/bench/pipeline"
	"github.com/backfill-bench/backfill-bench/contract"
)

// PacedMetrics are what a replay reports of its paced run r (baseline.PacedReplay):
// the CPU per row of the job and of its offloaded compactions, and the bytes its
// compactions wrote.
func PacedMetrics(r *pipeline.Result) []Metric {
	return []Metric{
		{ratio(int64(r.CPU), r.Rows()), contract.UnitPacedCPUPerRow},
		{ratio(int64(r.CompactCPU), r.Rows()), contract.UnitPacedCompactCPUPerRow},
		{float64(r.FS.Bytes[meterfs.Compaction]), contract.UnitPacedCompactionBytes},
	}
}

// Metric is one reported value.
type Metric struct {
	Value float64
	Unit  string
}

// Metrics returns what a backfill job reports: its whole-job figures, and its
// steady-state ones when it has at least contract.MinSteadyBarriers regular
// barriers (Steady says whether it had). ns/op is the job's wall time from the
// first epoch to the final commit, replacing the testing package's own timing.
func Metrics(r *pipeline.Result) (out []Metric, steady bool) {
	reg := r.Regular()
	out = []Metric{
		{float64(r.Wall.Nanoseconds()), contract.UnitNsPerOp},
		{r.RowsPerSec(), contract.UnitRowsPerSec},
		{ratio(int64(r.CPU), r.Rows()), contract.UnitCPUPerRow},
		{pipeline.BarrierLatency(r.Epochs, 1).Seconds(), contract.UnitBarrierMax},
		{r.WriteAmp(), contract.UnitWriteAmp},
		{r.SettleWriteAmp(), contract.UnitSettleAmp},
		{float64(r.Settle.TotalBytes()), contract.UnitSettleBytes},
		{ratio(r.Logical.State, r.Logical.MV), contract.UnitStatePerMV},
		{float64(r.Logical.Total()), contract.UnitLogicalPerOp},
		{float64(r.Persist().Total()), contract.UnitPersistBytes},
		{float64(r.AllocBytes), contract.UnitAllocBytes},
		{float64(r.Allocs), contract.UnitAllocs},
		{float64(len(reg)), contract.UnitBarriers},
	}
	for _, c := range meterfs.Categories() {
		out = append(out, Metric{float64(r.FS.Bytes[c]), contract.FSUnit(c.String())})
	}
	if r.FS.Uploads > 0 {
		ckpts := int64(0)
		for _, e := range r.Epochs {
			if e.Checkpoint {
				ckpts++
			}
		}
		out = append(out, Metric{ratio(r.FS.Uploads, ckpts), contract.UnitUploadsPerCkpt}, Metric{ratio(r.FS.UploadBytes, ckpts), contract.UnitUploadBytes})
	}
	out = append(out, lsmMetrics(r)...)
	if r.SplitUpdates > 0 { // only mixes with key-changing updates have any
		out = append(out, Metric{float64(r.SplitUpdates), contract.UnitSplitUpdates})
	}
	out = append(out, creatingMetrics(r)...)
	if len(reg) < contract.MinSteadyBarriers {
		return out, false
	}
	st := r.Steady()
	var stateRows, stateBytes int64
	var stateTime float64
	for _, e := range reg {
		stateRows += e.StateRows
		stateBytes += e.StateBytes
		stateTime += float64(e.StateTime.Nanoseconds())
	}
	n := float64(len(reg))
	out = append(out,
		Metric{float64(st.Rows) / st.Time.Seconds(), contract.UnitSteadyRows},
		Metric{ratio(int64(st.CPU), st.Rows), contract.UnitSteadyCPU},
		Metric{pipeline.BarrierLatency(reg, 0.50).Seconds(), contract.UnitBarrierP50},
		Metric{pipeline.BarrierLatency(reg, 0.99).Seconds(), contract.UnitBarrierP99},
		Metric{float64(stateRows) / n, contract.UnitStateRows},
		Metric{float64(stateBytes) / n, contract.UnitStateBytes},
	)
	if stateTime > 0 {
		// Only with persist=on: benchfmt leaves a zero in ns unscaled, so a zero
		// would sit in a table of its own beside the scaled values.
		out = append(out, Metric{stateTime / n, contract.UnitStateNanos})
	}
	return out, true
}

// lsmMetrics are the job's write stalls by cause and, with offloaded compactions,
// their CPU per row.
func lsmMetrics(r *pipeline.Result) []Metric {
	var memtable, l0 float64
	for _, e := range r.Epochs {
		memtable += e.LSM.MemTableStallTime.Seconds()
		l0 += e.LSM.L0StallTime.Seconds()
	}
	out := []Metric{{memtable, contract.UnitMemTableStallSec}, {l0, contract.UnitL0StallSec}}
	if r.CompactCPU > 0 {
		out = append(out, Metric{ratio(int64(r.CompactCPU), r.Rows()), contract.UnitCompactCPUPerRow})
	}
	return out
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
