// Package judge decides what changed: it groups results as benchstat does, computes
// the same statistics, and turns base-versus-head comparisons into a verdict with
// thresholds, directions and multiple-testing correction.
package judge

import (
	"fmt"
	"slices"
	"strconv"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"

	"github.com/backfill-bench/backfill-bench/contract"
)

// GridConfig says how to split results, in benchstat's projection syntax.
type GridConfig struct {
	Table  string // tables, besides the unit (benchstat -table); default ".config"
	Row    string // default ".fullname"
	Col    string // default ".file"
	Ignore string // keys left out of .config (benchstat -ignore)
	Filter string // benchstat -filter; default "*"
}

// RoundKey is the config key, internal to a comparison (never written to a file),
// that carries the round a result was measured in; results of base and head with the
// same round ran as a pair (at once or back to back) and are compared as one.
const RoundKey = ".round"

// UnitOnly, as GridConfig.Table, makes one table per unit whatever the
// configuration: for results known to come from one machine's history.
const UnitOnly = ".unit"

// Grid is benchstat's analysis of a set of results: per table (one unit and the table
// keys), a sample per row and column summarized by its median and 95 % confidence
// interval, and each column compared with the first by the Mann–Whitney U test.
type Grid struct {
	Tables []*GridTable
}

// GridTable is one unit's table.
type GridTable struct {
	Key    benchproc.Key // the table projection, with .unit
	Unit   string
	Better int  // +1 higher is better, −1 lower, 0 unknown
	Exact  bool // the unit's values are exact (assume=exact): no p-value
	Rows   []benchproc.Key
	Cols   []benchproc.Key
	Cells  map[GridKey]*GridCell
}

// GridKey addresses a cell.
type GridKey struct{ Row, Col benchproc.Key }

// GridCell is one sample with its summary and, outside the first column, its
// comparison with the first column's cell of the same row.
type GridCell struct {
	Raw     []float64 // the values in the order read
	Rounds  []int     // each value's round (RoundKey); nil when a value has none
	Sample  *benchmath.Sample
	Summary benchmath.Summary
	Base    *GridCell             // the first column's cell; nil in it or when missing
	Cmp     *benchmath.Comparison // against Base
	Exact   bool                  // the unit is declared assume=exact: a run measures it without noise
}

// Delta is the relative change of the center against Base (0.05 = +5 %); ok is false
// without a base or with a zero base.
func (c *GridCell) Delta() (d float64, ok bool) {
	if c.Base == nil || c.Base.Summary.Center == 0 {
		return 0, false
	}
	return c.Summary.Center/c.Base.Summary.Center - 1, true
}

// Significant reports whether the comparison rejects "no difference" at its alpha.
func (c *GridCell) Significant() bool { return c.Cmp != nil && c.Cmp.P <= c.Cmp.Alpha }

// Confidence is the confidence level of every interval, as benchstat's default.
const Confidence = 0.95

// NewGrid projects the results like benchstat does with the same flags and computes
// the same statistics (benchmath's assumption for each unit, default thresholds).
func NewGrid(cfg GridConfig, results []*benchfmt.Result, units benchfmt.UnitMetadataMap) (*Grid, error) {
	switch cfg.Table {
	case "":
		cfg.Table = ".config"
	case UnitOnly:
		cfg.Table = "" // ParseWithUnit adds the unit to any projection
	}
	if cfg.Row == "" {
		cfg.Row = ".fullname"
	}
	if cfg.Col == "" {
		cfg.Col = ".file"
	}
	if cfg.Filter == "" {
		cfg.Filter = "*"
	}
	filter, err := benchproc.NewFilter(cfg.Filter)
	if err != nil {
		return nil, fmt.Errorf("filter %q: %w", cfg.Filter, err)
	}
	var parser benchproc.ProjectionParser
	tableBy, unitField, err := parser.ParseWithUnit(cfg.Table, filter)
	if err != nil {
		return nil, fmt.Errorf("table projection %q: %w", cfg.Table, err)
	}
	rowBy, err := parser.Parse(cfg.Row, filter)
	if err != nil {
		return nil, fmt.Errorf("row projection %q: %w", cfg.Row, err)
	}
	colBy, err := parser.Parse(cfg.Col, filter)
	if err != nil {
		return nil, fmt.Errorf("column projection %q: %w", cfg.Col, err)
	}
	// Parsing the ignored keys claims them, which takes them out of .config.
	if _, err := parser.Parse(cfg.Ignore, filter); err != nil {
		return nil, fmt.Errorf("ignore %q: %w", cfg.Ignore, err)
	}

	type building struct {
		rows, cols map[benchproc.Key]bool
		values     map[GridKey][]float64
		rounds     map[GridKey][]int
		unpaired   map[GridKey]bool // a value without a round
	}
	tables := map[benchproc.Key]*building{}
	for _, r := range results {
		if ok, _ := filter.Apply(r); !ok {
			continue
		}
		row, col := rowBy.Project(r), colBy.Project(r)
		for i, tk := range tableBy.ProjectValues(r) {
			t := tables[tk]
			if t == nil {
				t = &building{rows: map[benchproc.Key]bool{}, cols: map[benchproc.Key]bool{}, values: map[GridKey][]float64{},
					rounds: map[GridKey][]int{}, unpaired: map[GridKey]bool{}}
				tables[tk] = t
			}
			t.rows[row], t.cols[col] = true, true
			k := GridKey{row, col}
			t.values[k] = append(t.values[k], r.Values[i].Value)
			if round, err := strconv.Atoi(r.GetConfig(RoundKey)); err == nil {
				t.rounds[k] = append(t.rounds[k], round)
			} else {
				t.unpaired[k] = true
			}
		}
	}

	g := &Grid{}
	thresholds := benchmath.DefaultThresholds
	for _, tk := range sortedKeys(tables) {
		b := tables[tk]
		unit := tk.Get(unitField)
		t := &GridTable{
			Key: tk, Unit: unit, Better: contract.Better(units, unit),
			Rows: sortedKeys(b.rows), Cols: sortedKeys(b.cols), Cells: map[GridKey]*GridCell{},
		}
		assumption := units.GetAssumption(unit)
		t.Exact = assumption == benchmath.AssumeExact
		for k, vals := range b.values {
			s := benchmath.NewSample(slices.Clone(vals), &thresholds)
			c := &GridCell{Raw: vals, Sample: s, Summary: assumption.Summary(s, Confidence), Exact: assumption == benchmath.AssumeExact}
			if !b.unpaired[k] {
				c.Rounds = b.rounds[k]
			}
			t.Cells[k] = c
		}
		for k, c := range t.Cells {
			if k.Col == t.Cols[0] {
				continue
			}
			if base := t.Cells[GridKey{k.Row, t.Cols[0]}]; base != nil {
				cmp := assumption.Compare(base.Sample, c.Sample)
				c.Base, c.Cmp = base, &cmp
			}
		}
		g.Tables = append(g.Tables, t)
	}
	return g, nil
}

func sortedKeys[V any](m map[benchproc.Key]V) []benchproc.Key {
	keys := make([]benchproc.Key, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	benchproc.SortKeys(keys)
	return keys
}

// Median is the center the grid gives a sample: benchstat's median. values keep
// their order (benchmath sorts a sample in place; callers pair values by round).
func Median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	th := benchmath.DefaultThresholds
	return benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(values), &th), Confidence).Center
}
