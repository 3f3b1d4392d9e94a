package judge

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/perf/benchunit"

	"github.com/backfill-bench/backfill-bench/contract"
)

// Thresholds is the smallest relative change of each unit that counts, as a
// fraction (0.03 = 3 %). A unit without one is shown but not judged.
type Thresholds map[string]float64

// DefaultThresholds gate the steady state's throughput and CPU per row, its median
// barrier latency, write amplification on the hot path and the job's allocations
// (with work-driven barriers the last two repeat exactly, so they settle where the
// timed figures cannot), and the cost of persisting state on its own: the state
// rows and bytes per barrier, the bytes persistence adds and state ÷ MV bytes
// (exact units: with work-driven barriers one run settles them). The barrier p99 is
// shown but not judged by default: over 120 barriers it is the second slowest,
// which moved 50–90 % between runs of one build on a 2-core machine (benchrun
// noise), so no compare could settle it at any useful threshold.
func DefaultThresholds() Thresholds {
	return Thresholds{contract.UnitSteadyRows: 0.03, contract.Tidy(contract.UnitSteadyCPU): 0.03, contract.UnitBarrierP50: 0.10,
		contract.UnitWriteAmp: 0.02, contract.UnitAllocs: 0.02,
		// The nightly's recovery cell: the rows emitted again are exact under a
		// work-driven cadence; the recovery time is a wall time.
		contract.UnitReemittedRows: 0.01, contract.UnitRecoverySec: 0.10,
		contract.UnitStateRows: 0.01, contract.UnitStateBytes: 0.01, contract.UnitPersistBytes: 0.01, contract.UnitStatePerMV: 0.01}
}

// Set parses "unit=pct,unit=pct" (e.g. "rows/s=5%,write-amp=1%") into t; a
// percentage of 0 removes the unit from the verdict.
func (t Thresholds) Set(list string) error {
	for _, kv := range strings.Split(list, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		unit, pct, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("threshold %q: want unit=percent, like rows/s=5%%", kv)
		}
		if err := t.set(unit, pct); err != nil {
			return err
		}
	}
	return nil
}

func (t Thresholds) set(unit, pct string) error {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(pct), "%"), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Errorf("threshold %s=%s: want a percentage ≥ 0, like 5%%", unit, pct)
	}
	unit = strings.TrimSpace(unit)
	if !contract.KnownUnit(unit) {
		return fmt.Errorf("threshold %s=%s: unknown unit %q; the units are those of `go tool benchstat` on a results file, like steady-rows/s or write-amp", unit, pct, unit)
	}
	_, unit = benchunit.Tidy(1, unit) // ns/op is sec/op, as benchstat shows it
	if v == 0 {
		delete(t, unit)
	} else {
		t[unit] = v / 100
	}
	return nil
}

// Load reads a JSON object of unit → percentage ("5%" or 5) into t.
func (t Thresholds) Load(name string) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf("thresholds: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("thresholds %s: %w", name, err)
	}
	for unit, v := range m {
		if err := t.set(unit, fmt.Sprint(v)); err != nil {
			return fmt.Errorf("thresholds %s: %w", name, err)
		}
	}
	return nil
}

// Corrections for testing many (cell, metric) pairs at once.
const (
	Holm = "holm" // Holm–Bonferroni: controls the chance of any false alarm
	BH   = "bh"   // Benjamini–Hochberg: controls the expected share of false alarms
)

// Adjust returns p-values adjusted for testing them all together.
func Adjust(method string, p []float64) ([]float64, error) {
	m := len(p)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return p[order[a]] < p[order[b]] })
	adj := make([]float64, m)
	switch method {
	case Holm:
		running := 0.0
		for rank, i := range order {
			running = math.Max(running, math.Min(1, float64(m-rank)*p[i]))
			adj[i] = running
		}
	case BH:
		running := 1.0
		for rank := m - 1; rank >= 0; rank-- {
			i := order[rank]
			running = math.Min(running, math.Min(1, float64(m)*p[i]/float64(rank+1)))
			adj[i] = running
		}
	default:
		return nil, fmt.Errorf("correction %q: want %s or %s", method, Holm, BH)
	}
	return adj, nil
}
