package harness

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchunit"
)

// Thresholds is the smallest relative change of each unit that counts, as a
// fraction (0.03 = 3 %). A unit without one is shown but not judged.
type Thresholds map[string]float64

// DefaultThresholds gate throughput, wall time, barrier tail and write amplification.
func DefaultThresholds() Thresholds {
	return Thresholds{"rows/s": 0.03, "sec/op": 0.03, "barrier-p99-sec": 0.10, "write-amp": 0.02}
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
	_, unit = benchunit.Tidy(1, strings.TrimSpace(unit)) // ns/op is sec/op, as benchstat shows it
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

// Statuses of a finding.
const (
	Regression  = "regression"
	Improvement = "improvement"
	NoChange    = "no change"
	NotJudged   = "not judged" // no threshold for the unit
	Unconfirmed = "unconfirmed"
)

// Stat is one side's sample of a metric.
type Stat struct {
	Median float64  `json:"median"`
	Lo     *float64 `json:"lo,omitempty"` // the 95 % interval; absent when n is too small for one
	Hi     *float64 `json:"hi,omitempty"`
	N      int      `json:"n"`
}

// summary is the Stat as benchmath's Summary, with an infinite interval when absent.
func (s Stat) summary() benchmath.Summary {
	sum := benchmath.Summary{Center: s.Median, Lo: math.Inf(-1), Hi: math.Inf(1)}
	if s.Lo != nil && s.Hi != nil {
		sum.Lo, sum.Hi = *s.Lo, *s.Hi
	}
	return sum
}

// Finding is one metric of one cell, base against head.
type Finding struct {
	Cell      string  `json:"cell"`
	Unit      string  `json:"unit"`
	Better    int     `json:"better"` // +1 higher is better, −1 lower
	Base      Stat    `json:"base"`
	Head      Stat    `json:"head"`
	Delta     float64 `json:"delta"` // relative change of the median, head vs base
	P         float64 `json:"p"`     // Mann–Whitney U
	PAdjusted float64 `json:"p_adjusted"`
	Threshold float64 `json:"threshold"`
	Status    string  `json:"status"`
	Confirm   *Stat   `json:"confirm_head,omitempty"` // the head's sample in the confirmation
}

// Verdict is the outcome of a comparison.
type Verdict struct {
	Base        string    `json:"base"`
	Head        string    `json:"head"`
	Regression  bool      `json:"regression"`
	Correction  string    `json:"correction"`
	Alpha       float64   `json:"alpha"`
	Findings    []Finding `json:"findings"`
	OnlyInBase  []string  `json:"only_in_base,omitempty"`
	OnlyInHead  []string  `json:"only_in_head,omitempty"`
	Notes       []string  `json:"notes,omitempty"`
	Regressions int       `json:"regressions"`
}

// Judge turns a grid of two columns (base, head) into findings. A finding is a
// regression only if its p-value, adjusted over every judged finding of the grid,
// is ≤ alpha and its change is beyond the unit's threshold in the bad direction.
func Judge(g *Grid, th Thresholds, correction string, alpha float64) (*Verdict, error) {
	v := &Verdict{Correction: correction, Alpha: alpha}
	only := map[string]map[string]bool{"base": {}, "head": {}}
	var judged []int
	var ps []float64
	for _, t := range g.Tables {
		if len(t.Cols) != 2 {
			return nil, fmt.Errorf("comparing needs two sides, have %d columns", len(t.Cols))
		}
		for _, row := range t.Rows {
			name := row.StringValues()
			base, head := t.Cells[GridKey{row, t.Cols[0]}], t.Cells[GridKey{row, t.Cols[1]}]
			switch {
			case base == nil && head == nil:
				continue
			case head == nil:
				only["base"][name] = true
				continue
			case base == nil:
				only["head"][name] = true
				continue
			}
			f := Finding{Cell: name, Unit: t.Unit, Better: t.Better, Base: statOf(base), Head: statOf(head),
				P: head.Cmp.P, Threshold: th[t.Unit], Status: NotJudged}
			f.Delta, _ = head.Delta()
			if f.Threshold > 0 && t.Better != 0 {
				judged = append(judged, len(v.Findings))
				ps = append(ps, f.P)
			}
			v.Findings = append(v.Findings, f)
		}
	}
	adj, err := Adjust(correction, ps)
	if err != nil {
		return nil, err
	}
	for k, i := range judged {
		f := &v.Findings[i]
		f.PAdjusted = adj[k]
		f.Status = classify(f.Delta, f.PAdjusted, f.Threshold, f.Better, alpha)
		if f.Status == Regression {
			v.Regressions++
		}
	}
	v.Regression = v.Regressions > 0
	for side, names := range only {
		list := slices.Sorted(func(yield func(string) bool) {
			for n := range names {
				if !yield(n) {
					return
				}
			}
		})
		if side == "base" {
			v.OnlyInBase = list
		} else {
			v.OnlyInHead = list
		}
	}
	return v, nil
}

// classify applies significance, threshold and direction.
func classify(delta, pAdj, threshold float64, better int, alpha float64) string {
	if pAdj > alpha || math.Abs(delta) <= threshold {
		return NoChange
	}
	if (delta > 0) == (better > 0) {
		return Improvement
	}
	return Regression
}

func statOf(c *GridCell) Stat {
	s := Stat{Median: c.Summary.Center, N: len(c.Sample.Values)}
	if !math.IsInf(c.Summary.Lo, 0) && !math.IsInf(c.Summary.Hi, 0) {
		lo, hi := c.Summary.Lo, c.Summary.Hi
		s.Lo, s.Hi = &lo, &hi
	}
	return s
}
