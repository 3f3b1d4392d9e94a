// Package cost estimates a bench run's seconds and peak bytes from measured figures.
package cost

import (
	"strings"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
)

// workloadCost is a workload table's relative cost per row (narrow = 1), measured
// on the in-memory profile.
var workloadCost = map[string]float64{"narrow": 1, "bid": 2.5, "person": 2.5, "auction": 3, "wide": 6}

// Measured run times the estimate comes from (2 cores, quiet machine).
// narrowRowCost: a run's seconds per row (load, job, verification, settle) of a
// narrow mem cell, from `make bench` of 5caeb85 (the quick suite, 8 rounds in
// duets, results 20261206T191710Z-5caeb858b7df): a duet of mem narrow off and on,
// 300 000 rows, took 1.7–2.5 s, i.e. 3.0 s a run at the runner's duet share (0.35).
// compactionCost: how many times that a profile's compaction mode makes a run:
// serial (hummock), from the same runs (narrow duets 22–29 s, bid 57–71 s:
// 13–16×, at 2500rows barriers); offloaded (engine), from the engine runs of
// 6b8f756 (sequential, 50krows barriers: 10⁶ rows 8.7–12.8 s a run, 10⁷ rows
// 128 s: 1.4×).
const narrowRowCost = 9e-6

var compactionCost = map[string]float64{profile.CompactionSerial: 14, profile.CompactionOffloaded: 1.4}

// Relative costs of the baselines' runs, each against a run of its cell (from the
// engine trial of 6b8f756 at 10⁶ rows, 50krows barriers: the cell 8.2 s, its
// replay's run, recording the backfill first, about twice that, and three times
// since it also replays at the backfill's pace; the raw copy's and scan-only's
// runs, loading A and copying or reading it once, under half).
const (
	Replay    = 3
	TableRead = 0.5
)

// Warmup is what a run with -warmup costs in runs without: its process loads A
// and runs the job twice.
const Warmup = 2

func weight(c contract.Cell) float64 {
	table, _, _ := strings.Cut(c.Workload, "+")
	if w, ok := workloadCost[table]; ok {
		return w
	}
	return 3
}

// Run is a cell's expected seconds per run: a process start and the load of
// table A, plus the job, by rows, workload, the profile's compaction mode and
// disk, and the snapshot rate limit (see narrowRowCost for where the figures come
// from).
func Run(c contract.Cell, p profile.Profile) float64 {
	w := weight(c)
	perRow := narrowRowCost * w
	if f, ok := compactionCost[p.Compaction]; ok {
		perRow *= f
	}
	cost := 0.3 + perRow*float64(c.Rows)
	if bw := max(p.WriteBandwidth, p.Bandwidth); bw > 0 {
		cost += float64(Bytes(c)) / float64(bw)
	}
	if r := c.Limit.Slowest(); r > 0 { // the scan cannot go faster than its limit
		cost = max(cost, 0.3+float64(c.Rows)/float64(r*int64(c.Par)))
	}
	if c.Limit.Paused() { // it waits out the pause first
		cost += c.Limit.Step.After.Seconds()
	}
	return cost
}

// Bytes is about how much a cell's job stores at its peak: table A, the MV, the
// WAL and the compactions' outputs before their inputs go, from the bytes per row
// a workload writes (Run's) with room to spare.
func Bytes(c contract.Cell) int64 {
	return int64(400 * weight(c) * float64(c.Rows))
}
