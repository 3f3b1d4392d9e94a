package judge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"regexp"
	"slices"
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

// Load reads a thresholds file into t, ignoring any per-cell rules in it; see
// Options.Load for its format.
func (t Thresholds) Load(name string) error {
	o := Options{Thresholds: t}
	return o.Load(name)
}

// CellThreshold is a threshold of one unit in the cells whose label Cell (a
// regular expression) matches.
type CellThreshold struct {
	Cell      string  `json:"cell"`
	Unit      string  `json:"unit"`
	Threshold float64 `json:"threshold"` // a fraction, 0.05 = 5 %; 0 leaves the unit unjudged in those cells
	re        *regexp.Regexp
}

// Matches reports whether the rule covers a cell's unit.
func (c CellThreshold) Matches(cell, unit string) bool {
	if c.Unit != unit {
		return false
	}
	if c.re == nil { // made in code, not by Load
		ok, _ := regexp.MatchString(c.Cell, cell)
		return ok
	}
	return c.re.MatchString(cell)
}

// thresholdsFile is a thresholds file: per unit, and per cell pattern × unit.
type thresholdsFile struct {
	Units map[string]any `json:"units"`
	Cells []struct {
		Cell      string `json:"cell"`
		Unit      string `json:"unit"`
		Threshold any    `json:"threshold"`
	} `json:"cells"`
}

// Load reads a thresholds file into o: either a JSON object of unit → percentage
// ("5%" or 5), or {"units": {unit: percentage}, "cells": [{"cell": regexp, "unit":
// unit, "threshold": percentage}]}, whose cell rules apply, last match first,
// to the cells whose label the regexp matches.
func (o *Options) Load(name string) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf("thresholds: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("thresholds %s: %w", name, err)
	}
	_, hasUnits := m["units"]
	_, hasCells := m["cells"]
	if !hasUnits && !hasCells {
		m = map[string]any{"units": m}
		if data, err = json.Marshal(m); err != nil {
			return err
		}
	}
	var f thresholdsFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("thresholds %s: %w (want {\"units\": {unit: percent}, \"cells\": [{\"cell\": regexp, \"unit\": unit, \"threshold\": percent}]})", name, err)
	}
	for _, unit := range slices.Sorted(maps.Keys(f.Units)) {
		if err := o.Thresholds.set(unit, fmt.Sprint(f.Units[unit])); err != nil {
			return fmt.Errorf("thresholds %s: %w", name, err)
		}
	}
	for i, c := range f.Cells {
		one := Thresholds{}
		if err := one.set(c.Unit, fmt.Sprint(c.Threshold)); err != nil {
			return fmt.Errorf("thresholds %s: cells[%d]: %w", name, i, err)
		}
		re, err := regexp.Compile(c.Cell)
		if err != nil {
			return fmt.Errorf("thresholds %s: cells[%d]: cell %q: %w", name, i, c.Cell, err)
		}
		unit := contract.Tidy(strings.TrimSpace(c.Unit))
		o.CellThresholds = append(o.CellThresholds, CellThreshold{Cell: c.Cell, Unit: unit, Threshold: one[unit], re: re})
	}
	return nil
}

// cellThreshold is the threshold of a unit in a cell: the last matching cell
// rule's, else the unit's.
func (o Options) cellThreshold(cell, unit string) float64 {
	for i := len(o.CellThresholds) - 1; i >= 0; i-- {
		if o.CellThresholds[i].Matches(cell, unit) {
			return o.CellThresholds[i].Threshold
		}
	}
	return o.Thresholds[unit]
}

// DefaultAlpha is the significance level after correction of every judgement
// (compare, bisect, noise, nightly, plot) that --alpha does not set.
const DefaultAlpha = 0.05

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
