package contract

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"
)

// Unit names, each with its better direction in Units. ns/op is read back as
// sec/op (benchfmt tidies it), which is the name tables and thresholds use.
//
// Whole-job figures cover the job from its first barrier to its final commit.
// Steady-state figures cover only the regular epochs (all but the first, which
// starts with the job, and the final one, which drains it) and are reported only
// for jobs with at least MinSteadyBarriers of them.
const (
	UnitNsPerOp      = "ns/op"
	UnitSecPerOp     = "sec/op"
	UnitRowsPerSec   = "rows/s"     // whole job
	UnitCPUPerRow    = "cpu-ns/row" // whole job, process user+sys
	UnitBarrierMax   = "barrier-max-sec"
	UnitWriteAmp     = "write-amp"        // bytes written during the job (the hot path) ÷ logical bytes of the MV and the upstream's changes (never the state table's)
	UnitSettleAmp    = "settle-write-amp" // bytes of the untimed flush and compactions after it ÷ the same logical bytes
	UnitSettleBytes  = "settle-B/op"
	UnitStatePerMV   = "state/mv-bytes"
	UnitLogicalPerOp = "logical-B/op" // every table's, state included
	// Every byte persisting backfill progress adds to the job: the state rows'
	// logical bytes and their share of the WAL, flush and compaction bytes (per
	// category in the trace); 0 with persist=off.
	UnitPersistBytes = "persist-B/op"
	UnitAllocBytes   = "job-B/op"      // heap bytes allocated during the job
	UnitAllocs       = "job-allocs/op" // heap objects allocated during the job
	UnitBarriers     = "barriers"      // regular barriers: the steady state's length

	UnitSteadyRows = "steady-rows/s"
	UnitSteadyCPU  = "steady-cpu-ns/row"
	UnitBarrierP50 = "barrier-p50-sec" // over the regular barriers
	UnitBarrierP99 = "barrier-p99-sec"
	UnitStateRows  = "state-rows/barrier" // the direct cost of persistence, per regular barrier
	UnitStateBytes = "state-B/barrier"
	UnitStateNanos = "state-ns/barrier"

	// Object-store profiles: sstables uploaded during the job (checkpoint flushes and
	// compactions), per checkpoint.
	UnitUploadsPerCkpt = "uploads/checkpoint"
	UnitUploadBytes    = "upload-B/checkpoint"

	UnitRecoverySec   = "recovery-sec"   // reopen → the scan emits its first row again
	UnitReemittedRows = "reemitted-rows" // snapshot rows emitted again after a crash: past its persisted progress

	// Updates that changed the primary key and went to two actors as a Delete and
	// an Insert; reported only when some did.
	UnitSplitUpdates = "split-updates"
)

// The LSM's cost apart from the job's: the write stalls of the job by cause, in
// seconds (the memtables full, waiting for a flush; L0 at its stop threshold,
// waiting for compactions), and with offloaded compactions, their CPU per row
// (which cpu-ns/row then leaves out).
const (
	UnitMemTableStallSec = "memtable-stall-sec"
	UnitL0StallSec       = "l0-stall-sec"
	UnitCompactCPUPerRow = "compact-cpu-ns/row"
)

// A replay's figures at its backfill's pace (baseline.PacedReplay), which its
// result carries beside its own: the job's CPU per row, its offloaded compactions',
// and its compactions' bytes.
const (
	UnitPacedCPUPerRow        = "paced-cpu-ns/row"
	UnitPacedCompactCPUPerRow = "paced-compact-cpu-ns/row"
	UnitPacedCompactionBytes  = "paced-fs-compaction-B/op"
)

// ExactUnits are the judged units that repeat exactly under a work-driven cadence,
// declared assume=exact.
var ExactUnits = []string{UnitStateRows, UnitStateBytes, UnitPersistBytes, UnitStatePerMV}

// MinSteadyBarriers is how many regular barriers a job needs for its steady-state
// figures: a p99 over fewer is its maximum in disguise.
const MinSteadyBarriers = 100

// Tidy is a unit as benchfmt reads it back: "ns" becomes "sec" (cpu-ns/row is
// cpu-sec/row in tables, with its value scaled), "MB" becomes "B". Tables,
// thresholds and plots name units this way.
func Tidy(unit string) string {
	_, u := benchunit.Tidy(1, unit)
	return u
}

// FSCategories are the filesystem write categories, in report order; the bench
// package's tests check that the byte meter has exactly these.
var FSCategories = []string{"wal", "flush", "compaction", "manifest", "other"}

// FSUnit is the unit of physical bytes written in one category: fs-wal-B/op.
func FSUnit(category string) string { return "fs-" + category + "-B/op" }

// Units lists every unit the benchmarks report with whether higher is better.
func Units() []benchfmt.UnitMetadata {
	m := func(unit, better string) benchfmt.UnitMetadata {
		return benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: unit, Key: "better"}, OrigUnit: unit, Value: better}
	}
	u := []benchfmt.UnitMetadata{
		m(UnitRowsPerSec, "higher"),
		m(UnitCPUPerRow, "lower"),
		m(UnitBarrierMax, "lower"),
		m(UnitWriteAmp, "lower"),
		m(UnitSettleAmp, "lower"),
		m(UnitSettleBytes, "lower"),
		m(UnitStatePerMV, "lower"),
		m(UnitLogicalPerOp, "lower"),
		m(UnitPersistBytes, "lower"),
		m(UnitAllocBytes, "lower"),
		m(UnitAllocs, "lower"),
		m(UnitSteadyRows, "higher"),
		m(UnitSteadyCPU, "lower"),
		m(UnitBarrierP50, "lower"),
		m(UnitBarrierP99, "lower"),
		m(UnitStateRows, "lower"),
		m(UnitStateBytes, "lower"),
		m(UnitStateNanos, "lower"),
		m(UnitUploadsPerCkpt, "lower"),
		m(UnitUploadBytes, "lower"),
		m(UnitRecoverySec, "lower"),
		m(UnitReemittedRows, "lower"),
		// The length of the steady state and the updates split describe the work;
		// they are no better either way.
		{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: UnitBarriers, Key: "assume"}, OrigUnit: UnitBarriers, Value: "exact"},
		{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: UnitSplitUpdates, Key: "assume"}, OrigUnit: UnitSplitUpdates, Value: "exact"},
	}
	// The bytes of persistence repeat exactly when the work does (work-driven
	// barriers): one run is the figure, and any difference is a change. Where they
	// vary (time-driven barriers) the judge falls back to its statistics.
	for _, unit := range ExactUnits {
		u = append(u, benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: unit, Key: "assume"}, OrigUnit: unit, Value: "exact"})
	}
	for _, c := range FSCategories {
		u = append(u, m(FSUnit(c), "lower"))
	}
	u = append(u, creatingUnits()...)
	u = append(u, m(UnitMemTableStallSec, "lower"), m(UnitL0StallSec, "lower"), m(UnitCompactCPUPerRow, "lower"),
		m(UnitPacedCPUPerRow, "lower"), m(UnitPacedCompactCPUPerRow, "lower"), m(UnitPacedCompactionBytes, "lower"))
	u = append(u, instructionUnits()...)
	return u
}

// UnitMap is Units as benchfmt's map, for results made in memory.
func UnitMap() benchfmt.UnitMetadataMap {
	out := benchfmt.UnitMetadataMap{}
	for _, u := range Units() {
		out[u.UnitMetadataKey] = &u
	}
	return out
}

// contractUnits is UnitMap keyed by tidied unit, as benchfmt's lookups are, made
// once (read only).
var contractUnits = func() benchfmt.UnitMetadataMap {
	out := benchfmt.UnitMetadataMap{}
	for _, u := range Units() {
		u.Unit = Tidy(u.Unit)
		out[u.UnitMetadataKey] = &u
	}
	return out
}()

// DirectionConflicts names the units whose direction in the files' metadata
// differs from the contract's, which Better keeps: "job-allocs/op: the file says
// better=higher, the contract lower".
func DirectionConflicts(units benchfmt.UnitMetadataMap) []string {
	var out []string
	word := map[int]string{1: "higher", -1: "lower"}
	for _, k := range slices.SortedFunc(maps.Keys(units), func(a, b benchfmt.UnitMetadataKey) int { return strings.Compare(a.Unit, b.Unit) }) {
		if k.Key != "better" {
			continue
		}
		want := contractUnits.GetBetter(k.Unit)
		if got := units.GetBetter(k.Unit); want != 0 && got != want {
			out = append(out, fmt.Sprintf("%s: a results file declares better=%s, the contract %s, which the verdict keeps", k.Unit, units[k].Value, word[want]))
		}
	}
	return out
}

// WriteUnits writes the Unit metadata lines, so that tools reading the results know
// each metric's direction.
func WriteUnits(w io.Writer) error {
	bw := benchfmt.NewWriter(w)
	for _, u := range Units() {
		if err := bw.Write(&u); err != nil {
			return err
		}
	}
	return nil
}

// Better is a unit's direction, +1 higher is better, −1 lower, 0 unknown: the
// contract's (Units) for a unit it lists, whatever a results file declares (a
// file must not flip what a verdict judges); else from the files' Unit metadata
// or, without one, from its name: rates (…/s) are better higher; times, bytes,
// allocations and amplification lower.
func Better(units benchfmt.UnitMetadataMap, unit string) int {
	if b := contractUnits.GetBetter(unit); b != 0 {
		return b
	}
	if b := units.GetBetter(unit); b != 0 {
		return b
	}
	switch {
	case strings.HasSuffix(unit, "/s"):
		return 1
	case strings.Contains(unit, "sec"), strings.HasSuffix(unit, "B/op"), strings.Contains(unit, "allocs"), strings.Contains(unit, "amp"):
		return -1
	}
	return 0
}

// Quantile is the nearest-rank q-quantile of sorted values (0 when there are none):
// the smallest value with at least a fraction q of the values at or below it. Every
// reported latency quantile uses it.
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
