package contract

import "slices"

// The baselines a backfill cell is measured against, each its own benchmark whose
// sub-benchmark names carry the dimensions its work depends on:
//   - RawCopy, the append-order copy: A's rows copied to another table in key
//     order, a synced commit every 64 chunks; the storage's limit for the table
//     (profile, workload, rows).
//   - Replay: the epoch batches a backfill of the cell committed, with its syncs,
//     committed again without the executor; named by the whole cell, as its
//     batches depend on every dimension.
//   - ScanOnly: the cell's actors reading A as its scan does (scan, vnodes, par),
//     writing nothing.
const (
	RawCopyBenchmark  = "RawCopy"
	ReplayBenchmark   = "Replay"
	ScanOnlyBenchmark = "ScanOnly"
)

// Baselines are the baselines' benchmarks with the labels tables and plots show
// them by, in the order they show them.
var Baselines = []struct{ Benchmark, Label string }{
	{ReplayBenchmark, "replay"},
	{RawCopyBenchmark, "append-order copy"},
	{ScanOnlyBenchmark, "scan-only"},
}

// RawCopyName is the append-order copy's sub-benchmark name for the cell's table.
func (c Cell) RawCopyName() string { return c.only("profile", "workload", "rows") }

// ReplayName is the replay's sub-benchmark name for the cell: the cell's Name.
func (c Cell) ReplayName() string { return c.Name() }

// ScanOnlyName is the scan-only baseline's sub-benchmark name for the cell: the
// dimensions a scan's reads depend on, vnodes left out at its default as in Name.
func (c Cell) ScanOnlyName() string {
	return c.only("profile", "workload", "rows", "scan", "vnodes", "par")
}

// only is the cell's name of just the given dimensions, in table order.
func (c Cell) only(dims ...string) string {
	return JoinFields(slices.DeleteFunc(Fields(c.Name()), func(f Field) bool { return !slices.Contains(dims, f.Dim) }))
}

// BaselineName is the full name (without GOMAXPROCS suffix) of the cell's baseline
// of benchmark base (one of Baselines), as Label shows it.
func (c Cell) BaselineName(base string) string {
	switch base {
	case RawCopyBenchmark:
		return base + "/" + c.RawCopyName()
	case ReplayBenchmark:
		return base + "/" + c.ReplayName()
	case ScanOnlyBenchmark:
		return base + "/" + c.ScanOnlyName()
	}
	return ""
}
