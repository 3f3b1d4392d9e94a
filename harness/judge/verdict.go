package judge

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/pprofdiff"
	"github.com/backfill-bench/backfill-bench/harness/stats"
	"github.com/backfill-bench/backfill-bench/harness/testbed"
)

// Status is what a finding says about its (cell, metric) pair.
type Status int

// Statuses of a judged (cell, metric) pair.
const (
	NotJudged    Status = iota // no threshold or no direction for the unit
	NoRegression               // the change's interval lies inside the threshold on the bad side
	Improvement                // significant and beyond the threshold, the good way
	Regression                 // significant and beyond the threshold, the bad way
	Unconfirmed                // a regression the confirmation pass did not see again
	Inconclusive               // the interval reaches past the threshold on the bad side
)

var statusNames = []string{"not judged", "no regression", "improvement", "regression", "unconfirmed", "inconclusive"}

// Resolved reports whether the status settles its pair: a regression, an
// improvement or no regression; not inconclusive nor unconfirmed.
func (s Status) Resolved() bool { return s == NoRegression || s == Improvement || s == Regression }

func (s Status) String() string { return statusNames[s] }

// MarshalText writes the status's name, as verdict.json carries it.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a status's name.
func (s *Status) UnmarshalText(b []byte) error {
	i := slices.Index(statusNames, string(b))
	if i < 0 {
		return fmt.Errorf("unknown status %q (have %s)", b, strings.Join(statusNames, ", "))
	}
	*s = Status(i)
	return nil
}

// Stat is one side's sample of a metric.
type Stat struct {
	Median float64  `json:"median"`
	Lo     *float64 `json:"lo,omitempty"` // the 95 % interval; absent when n is too small for one
	Hi     *float64 `json:"hi,omitempty"`
	N      int      `json:"n"`
}

// Summary is the Stat as benchmath's Summary, with an infinite interval when absent.
func (s Stat) Summary() benchmath.Summary {
	sum := benchmath.Summary{Center: s.Median, Lo: math.Inf(-1), Hi: math.Inf(1)}
	if s.Lo != nil && s.Hi != nil {
		sum.Lo, sum.Hi = *s.Lo, *s.Hi
	}
	return sum
}

// StatOf is a grid cell's sample as a Stat.
func StatOf(c *GridCell) Stat {
	s := Stat{Median: c.Summary.Center, N: len(c.Sample.Values)}
	if !math.IsInf(c.Summary.Lo, 0) && !math.IsInf(c.Summary.Hi, 0) {
		lo, hi := c.Summary.Lo, c.Summary.Hi
		s.Lo, s.Hi = &lo, &hi
	}
	return s
}

// Finding is one metric of one cell, base against head.
type Finding struct {
	Cell   string `json:"cell"` // contract.Label of the benchmark name
	Unit   string `json:"unit"`
	Better int    `json:"better"` // +1 higher is better, −1 lower
	Base   Stat   `json:"base"`
	Head   Stat   `json:"head"`
	// Pairs is how many rounds ran both sides as a pair; with any, the change is
	// the Hodges–Lehmann estimate of the per-round ratio head/base and P is from the
	// Wilcoxon signed-rank test. Without, the change is the ratio of the medians and
	// P is from the Mann–Whitney U test.
	Pairs     int      `json:"pairs"`
	Delta     float64  `json:"delta"`              // relative change, head vs base
	Lo        *float64 `json:"delta_lo,omitempty"` // the change's 95 % interval; absent when n is too small
	Hi        *float64 `json:"delta_hi,omitempty"`
	P         float64  `json:"p"`
	PAdjusted float64  `json:"p_adjusted"`
	Threshold float64  `json:"threshold"`
	// Detectable is the smallest change this pair's test would find with 90 %
	// probability at the corrected significance level, given its spread and n;
	// absent when no change could be found (too few runs for the test to reach
	// that level at all).
	Detectable *float64 `json:"detectable,omitempty"`
	Status     Status   `json:"status"`
	Confirm    *Stat    `json:"confirm_head,omitempty"` // the head's sample in the confirmation
	// StandsFor is the steady-state unit this whole-job unit is judged in place of,
	// with that unit's threshold, in a cell whose results lack it.
	StandsFor string `json:"stands_for,omitempty"`
	// Exact is a unit whose values are exact (benchfmt's assume=exact): benchstat
	// prints its change with no p-value.
	Exact bool `json:"exact,omitempty"`

	// FromZero: the base is zero in every run and the head is not, a change with no
	// ratio (Delta is 0), beyond any threshold.
	FromZero bool `json:"from_zero,omitempty"`
}

// interval is the change's interval, ±Inf where absent.
func (f Finding) interval() (lo, hi float64) {
	if f.Lo == nil || f.Hi == nil {
		return math.Inf(-1), math.Inf(1)
	}
	return *f.Lo, *f.Hi
}

// Verdict is the outcome of a comparison.
type Verdict struct {
	Base       string    `json:"base"`
	Head       string    `json:"head"`
	Regression bool      `json:"regression"`
	Correction string    `json:"correction"`
	Alpha      float64   `json:"alpha"`
	Findings   []Finding `json:"findings"`
	OnlyInBase []string  `json:"only_in_base,omitempty"`
	OnlyInHead []string  `json:"only_in_head,omitempty"`
	// Lost are the cells with a judged metric on one side only ("cell (unit) in
	// base only"): never a pass, each counts as inconclusive.
	Lost []Lost `json:"lost,omitempty"`
	// FailedInHead are the cells lost in head whose job failed there: a regression.
	FailedInHead []string `json:"failed_in_head,omitempty"`
	Notes        []string `json:"notes,omitempty"`
	// Warnings are benchstat's, under its tables: "sec/op: need >= 6 samples …".
	Warnings []string `json:"warnings,omitempty"`
	// Units are the units of the grid, judged or not, so that a verdict over none
	// can name what would judge them.
	Units []string `json:"units,omitempty"`
	// ExpectedRegression is the reason a confirmed regression was let pass
	// (--expected-regression); the regression still stands in the findings.
	ExpectedRegression string `json:"expected_regression,omitempty"`
	Regressions        int    `json:"regressions"`
	// Inconclusive counts the judged pairs that are neither shown to regress nor
	// shown not to (inconclusive and unconfirmed): "no regression" needs none.
	Inconclusive int `json:"inconclusive"`
	// Detectable is, per judged unit, the median over its cells of the smallest
	// change the comparison could have detected; a unit whose median is infinite
	// (too few runs) is absent.
	Detectable map[string]float64 `json:"detectable,omitempty"`
	// Why, per confirmed regressed cell, is what profiling it once on each side
	// showed (compare fills it in when it can re-run the cells).
	Why []Why `json:"why,omitempty"`
}

// Lost is a cell with judged metrics that one side only has.
type Lost struct {
	Cell  string   `json:"cell"`
	Units []string `json:"units"`
	Side  string   `json:"side"` // the side that has them
}

func (l Lost) String() string {
	return fmt.Sprintf("%s (%s) in %s only", l.Cell, strings.Join(l.Units, ", "), l.Side)
}

// markFailed records, among the cells lost in head, those whose job failed there
// (failed are their full benchmark names or labels): a regression, not a gap.
func (v *Verdict) markFailed(failed []string) {
	for _, l := range v.Lost {
		if l.Side != SideBase || slices.Contains(v.FailedInHead, l.Cell) {
			continue
		}
		for _, name := range failed {
			if name == l.Cell || contract.Label(name) == l.Cell {
				v.FailedInHead = append(v.FailedInHead, l.Cell)
				break
			}
		}
	}
}

// Why is what profiling a regressed cell on both sides showed: the functions whose
// CPU time in the job grew and, where allocations regressed, those whose allocated
// bytes grew. The profiles stay in the comparison directory for go tool pprof.
type Why struct {
	Cell     string          `json:"cell"`
	CPU      *pprofdiff.Diff `json:"cpu,omitempty"`
	Heap     *pprofdiff.Diff `json:"heap,omitempty"`
	Profiles []string        `json:"profiles,omitempty"` // base and head CPU, then heap; relative to the directory
	Error    string          `json:"error,omitempty"`    // why the cell could not be profiled
	// Bytes is what the job wrote, per filesystem category and in all, on each side:
	// the medians of the measured rounds, beside the functions, so a regression
	// that writes more (or waits on more writes) shows where.
	Bytes []ByteChange `json:"bytes,omitempty"`
	// Instructions, with --measure instructions, are the functions whose own
	// instructions in the job window grew most: callgrind's counts, the mean of
	// the measured jobs on each side.
	Instructions *pprofdiff.Diff `json:"instructions,omitempty"`
}

// ByteChange is one byte unit's medians on each side and their relative change,
// absent when the base wrote none.
type ByteChange struct {
	Unit  string   `json:"unit"`
	Base  float64  `json:"base"`
	Head  float64  `json:"head"`
	Delta *float64 `json:"delta,omitempty"`
}

// Outcome is the verdict in a word: regression, inconclusive or no regression.
func (v *Verdict) Outcome() Status {
	switch {
	case v.Regression || len(v.FailedInHead) > 0:
		return Regression
	case v.Inconclusive > 0 || len(v.Lost) > 0:
		return Inconclusive
	}
	return NoRegression
}

// Options are what a verdict is judged by.
type Options struct {
	Thresholds Thresholds
	Correction string  // Holm or BH
	Alpha      float64 // significance after correction
	// AcrossMachines compares results of different machine fingerprints, which
	// are otherwise kept apart; the verdict then says so.
	AcrossMachines bool
	// CellThresholds override Thresholds for the cells they match (the last
	// matching rule wins).
	CellThresholds []CellThreshold
	// Welch are the units judged unpaired by Welch's t-test on the logs (see welch),
	// instead of the rank tests: instruction counts.
	Welch []string
}

// Validate checks the options; the errors name the flags that set them.
func (o Options) Validate() error {
	if o.Alpha <= 0 || o.Alpha >= 1 {
		return fmt.Errorf("--alpha %v: must be in (0, 1)", o.Alpha)
	}
	if _, err := Adjust(o.Correction, nil); err != nil {
		return fmt.Errorf("--correction: %w", err)
	}
	return nil
}

// Side is one side's results; Rounds, when not nil, gives each result's round
// (results of one round on both sides ran as a pair and are paired).
type Side struct {
	Results []*benchfmt.Result
	Rounds  []int
}

// The column names of a comparison's grid.
const (
	SideBase = "base"
	SideHead = "head"
)

// Compare judges head's results against base's. Both are grouped as `benchstat
// -ignore contract.CompareIgnore base head` groups them: one table per unit and
// per distinct configuration, so results of different machines never meet. When
// nothing could be compared at all, the error says which configuration differs.
func Compare(base, head Side, units benchfmt.UnitMetadataMap, o Options) (*Verdict, *Grid, error) {
	var tagged []*benchfmt.Result
	// Base first, then head: the grid's rows are in the order results are first
	// seen, so a map here would shuffle them from run to run.
	for _, ns := range []struct {
		name string
		side Side
	}{{SideBase, base}, {SideHead, head}} {
		name, side := ns.name, ns.side
		for i, r := range side.Results {
			r = r.Clone()
			r.SetConfig(".file", name)
			if side.Rounds != nil {
				r.SetConfig(RoundKey, strconv.Itoa(side.Rounds[i]))
			}
			tagged = append(tagged, r)
		}
	}
	ignore := contract.CompareIgnore
	if o.AcrossMachines {
		ignore += "," + contract.ConfigMachine
	}
	g, err := NewGrid(GridConfig{Col: ".file@(" + SideBase + " " + SideHead + ")", Ignore: ignore}, tagged, units)
	if err != nil {
		return nil, nil, err
	}
	if len(g.Tables) == 0 {
		return nil, nil, errors.New("compare: no benchmark results on either side")
	}
	v, err := Judge(g, o)
	if err != nil {
		return nil, nil, err
	}
	v.Notes = append(v.Notes, contract.DirectionConflicts(units)...)
	if o.AcrossMachines {
		v.Notes = append(v.Notes, "compared across machines (--across-machines): base "+testbed.MachinesOf(base.Results)+", head "+testbed.MachinesOf(head.Results)+"; differences may be the machines'")
	}
	if len(v.Findings) == 0 && len(base.Results) > 0 && len(head.Results) > 0 {
		return nil, nil, fmt.Errorf("compare: no cell and metric is on both sides (base has %s; head has %s)%s", unitsOf(g, SideBase), unitsOf(g, SideHead), testbed.ConfigDiff(base.Results, head.Results))
	}
	return v, g, nil
}

// unitsOf lists the units one side of a grid has, and in how many cells.
func unitsOf(g *Grid, side string) string {
	var out []string
	for _, t := range g.Tables {
		n := 0
		for k := range t.Cells {
			if k.Col.StringValues() == side {
				n++
			}
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("%s in %d cells", t.Unit, n))
		}
	}
	return orNone(out)
}

func orNone(v []string) string {
	if len(v) == 0 {
		return "none"
	}
	return strings.Join(v, " ")
}

// Judge turns a grid whose columns are base and head into findings. A finding is
// a regression only if its p-value, adjusted over every judged finding of the grid,
// is ≤ alpha and its change is beyond the unit's threshold in the bad direction; it
// is no regression only if its change's 95 % interval stays inside the threshold
// on the bad side; otherwise it is inconclusive. A cell or a metric on one side
// only is listed as such, and the rest is compared; a judged metric on one side
// only is lost, which is never a pass.
func Judge(g *Grid, o Options) (*Verdict, error) {
	v := &Verdict{Correction: o.Correction, Alpha: o.Alpha}
	only := [2]map[string][]string{{}, {}} // base, head: cell → units on that side only
	compared := map[string]bool{}
	labels := rowLabels(g)
	type pending struct {
		se, floor float64
	}
	var est []pending
	warn := newWarnings()
	units := map[string]bool{}                // of every cell
	cellUnits := map[string]map[string]bool{} // of each cell, on either side
	for _, t := range g.Tables {
		if len(t.Cols) > 2 {
			return nil, fmt.Errorf("comparing needs two sides, have %d columns", len(t.Cols))
		}
		units[t.Unit] = true
		oneSided := false
		for _, row := range t.Rows {
			name := labels[row]
			var cells [2]*GridCell
			for _, col := range t.Cols {
				side := 0
				if col.StringValues() == SideHead {
					side = 1
				}
				cells[side] = t.Cells[GridKey{Row: row, Col: col}]
			}
			base, head := cells[0], cells[1]
			for _, c := range cells {
				if c != nil {
					warn.add(t.Unit, c.Sample.Warnings, c.Summary.Warnings)
					if cellUnits[name] == nil {
						cellUnits[name] = map[string]bool{}
					}
					cellUnits[name][t.Unit] = true
				}
			}
			switch {
			case base == nil && head == nil:
				continue
			case head == nil:
				only[0][name] = append(only[0][name], t.Unit)
				oneSided = true
				continue
			case base == nil:
				only[1][name] = append(only[1][name], t.Unit)
				oneSided = true
				continue
			}
			if head.Cmp != nil {
				warn.add(t.Unit, head.Cmp.Warnings)
			}
			compared[name] = true
			f := Finding{Cell: name, Unit: t.Unit, Better: t.Better, Base: StatOf(base), Head: StatOf(head), Status: NotJudged, Exact: t.Exact}
			se, floor, note := f.estimate(base, head, o.welchUnit(t.Unit))
			if note != "" {
				v.Notes = append(v.Notes, note)
			}
			est = append(est, pending{se, floor})
			v.Findings = append(v.Findings, f)
		}
		if oneSided {
			warn.add(t.Unit, []error{errors.New("benchmark set differs from baseline; geomeans may not be comparable")})
		}
	}
	v.Units = slices.Sorted(maps.Keys(units))
	v.Warnings = warn.list()

	var judged []int
	var ps []float64
	standIns := map[string]map[string]int{} // stand-in → steady unit → cells
	for i := range v.Findings {
		f := &v.Findings[i]
		f.Threshold, f.StandsFor = o.threshold(f.Cell, f.Unit, units, cellUnits[f.Cell])
		if f.Threshold > 0 && f.Better != 0 {
			judged = append(judged, i)
			ps = append(ps, f.P)
			if f.StandsFor != "" {
				if standIns[f.Unit] == nil {
					standIns[f.Unit] = map[string]int{}
				}
				standIns[f.Unit][f.StandsFor]++
			}
		}
	}
	for _, u := range slices.Sorted(maps.Keys(standIns)) {
		for _, steady := range slices.Sorted(maps.Keys(standIns[u])) {
			v.Notes = append(v.Notes, fmt.Sprintf("%s judged in place of %s (its %g%% threshold) in %d cells: the results have no steady-state figures", u, steady, 100*o.Thresholds[steady], standIns[u][steady]))
		}
	}
	adj, err := Adjust(o.Correction, ps)
	if err != nil {
		return nil, err
	}
	// The detectable change at the level a test must pass after correction: the
	// first step of Holm, α/m, is the strictest any pair faces.
	level := o.Alpha / float64(max(len(judged), 1))
	byUnit := map[string][]float64{}
	for k, i := range judged {
		f := &v.Findings[i]
		f.PAdjusted = adj[k]
		d := math.Inf(1)
		if est[i].floor <= level { // else no outcome of the test reaches the level
			d = stats.Detectable(est[i].se, level)
		}
		if !math.IsInf(d, 0) {
			f.Detectable = &d
		}
		byUnit[f.Unit] = append(byUnit[f.Unit], d)
		f.Status = classify(*f, o.Alpha)
		switch f.Status {
		case Regression:
			v.Regressions++
		case Inconclusive:
			v.Inconclusive++
		}
	}
	if len(byUnit) > 0 {
		v.Detectable = map[string]float64{}
		for u, ds := range byUnit {
			if m := medianOf(ds); !math.IsInf(m, 0) {
				v.Detectable[u] = m
			}
		}
	}
	// A judged metric on one side only: a cell the head lost (a crash, a renamed
	// benchmark, a changed -N suffix) or gained cannot pass unseen.
	for side, m := range only {
		for _, name := range slices.Sorted(maps.Keys(m)) {
			l := Lost{Cell: name, Side: []string{SideBase, SideHead}[side]}
			for _, u := range m[name] {
				if thr, _ := o.threshold(name, u, units, cellUnits[name]); thr > 0 && contract.Better(nil, u) != 0 {
					l.Units = append(l.Units, u)
				}
			}
			if len(l.Units) > 0 {
				v.Lost = append(v.Lost, l)
			}
		}
	}
	v.Regression = v.Regressions > 0
	// A cell on one side only is named; a cell compared on some metrics names the
	// metrics one side lacks.
	list := func(m map[string][]string) []string {
		var out []string
		for _, name := range slices.Sorted(maps.Keys(m)) {
			if compared[name] {
				name += " (" + strings.Join(m[name], ", ") + ")"
			}
			out = append(out, name)
		}
		return out
	}
	v.OnlyInBase, v.OnlyInHead = list(only[0]), list(only[1])
	return v, nil
}

// Judged is how many (cell, metric) pairs the verdict judged.
func (v *Verdict) Judged() int {
	n := 0
	for _, f := range v.Findings {
		if f.Status != NotJudged {
			n++
		}
	}
	return n
}

// rowLabels names the grid's rows by contract.Label, which drops the -N
// GOMAXPROCS suffix, except where rows differ only by it: those keep it, so that
// Foo-2 and Foo-4 never read as one row.
func rowLabels(g *Grid) map[benchproc.Key]string {
	full := map[string]map[string]bool{} // label → full names
	out := map[benchproc.Key]string{}
	for _, t := range g.Tables {
		for _, row := range t.Rows {
			name := row.StringValues()
			l := contract.Label(name)
			if full[l] == nil {
				full[l] = map[string]bool{}
			}
			full[l][name] = true
			out[row] = l
		}
	}
	for row, l := range out {
		if len(full[l]) > 1 {
			name := row.StringValues()
			if i := strings.LastIndexByte(name, '-'); i > 0 && !strings.Contains(name[i:], "/") {
				out[row] = l + name[i:]
			}
		}
	}
	return out
}

// standIns are the whole-job units judged, in order of preference, in place of a
// steady-state unit that the results lack (plain go test -bench output, or jobs
// too short for a steady state). Results that have it somewhere keep their other
// cells' whole-job units unjudged: a recovery or a raw copy is not a steady state.
var standIns = []struct {
	steady string
	whole  []string
}{
	{contract.UnitSteadyRows, []string{contract.UnitRowsPerSec, contract.UnitSecPerOp}},
	{contract.Tidy(contract.UnitSteadyCPU), []string{contract.Tidy(contract.UnitCPUPerRow)}},
}

// threshold is the threshold of a cell's unit, and the steady-state unit it stands
// in for, if any: a cell rule's, else the unit's; a whole-job unit without one
// takes the threshold of a steady-state unit that none of the results (units) has,
// if it is the first of its stand-ins that the cell has (cellUnits).
func (o Options) threshold(cell, unit string, units, cellUnits map[string]bool) (float64, string) {
	if t := o.cellThreshold(cell, unit); t > 0 {
		return t, ""
	}
	for _, si := range standIns {
		if units[si.steady] {
			continue
		}
		for _, w := range si.whole {
			if cellUnits[w] {
				if w == unit {
					if t := o.cellThreshold(cell, si.steady); t > 0 {
						return t, si.steady
					}
				}
				break
			}
		}
	}
	return 0, ""
}

// warnings gathers benchstat's warnings, in first-seen order, with the units
// each concerns and how many times it was given.
type warnings struct {
	order []string
	units map[string][]string
	count map[string]int
}

func newWarnings() *warnings { return &warnings{units: map[string][]string{}, count: map[string]int{}} }

func (w *warnings) add(unit string, lists ...[]error) {
	for _, l := range lists {
		for _, e := range l {
			k := e.Error()
			if w.count[k] == 0 {
				w.order = append(w.order, k)
			}
			w.count[k]++
			if !slices.Contains(w.units[k], unit) {
				w.units[k] = append(w.units[k], unit)
			}
		}
	}
}

func (w *warnings) list() []string {
	var out []string
	for _, k := range w.order {
		out = append(out, fmt.Sprintf("%s (%s: %d)", k, strings.Join(w.units[k], ", "), w.count[k]))
	}
	return out
}

// estimate sets the change, its interval and p-value from CompareCells and
// returns the standard error and floor of its test, for the detectable change.
// The note says why rounds were compared unpaired, if they were.
func (f *Finding) estimate(base, head *GridCell, byWelch bool) (se, floor float64, note string) {
	c := CompareCells(base, head)
	if w, ok := welch(base, head); byWelch && ok {
		if _, exact := compareExact(base, head); !exact {
			c = w
		}
	}
	f.Pairs, f.Delta, f.Lo, f.Hi, f.P, f.FromZero = c.Pairs, c.Delta, c.Lo, c.Hi, c.P, c.FromZero
	if c.Unpaired != "" {
		note = fmt.Sprintf("%s %s: %s", f.Cell, f.Unit, c.Unpaired)
	}
	return c.se, c.floor, note
}

// Change is one metric of head against base.
type Change struct {
	Pairs  int      // rounds paired; 0: unpaired
	Delta  float64  // relative change, head vs base
	Lo, Hi *float64 // its 95 % interval; nil when n is too small
	P      float64
	// Unpaired says why cells that share rounds were compared unpaired.
	Unpaired string
	se       float64 // standard error of the log ratio
	floor    float64 // the smallest p-value the test can give at this n

	// FromZero: the base is zero in every run, the head is not and not below zero;
	// the change has no ratio (Delta is 0).
	FromZero bool
}

// CompareCells compares two cells of a grid: zero on both sides, or a unit
// declared exact that repeated exactly on each side, without statistics (see
// compareExact); else paired when they share rounds (the Hodges–Lehmann estimate
// of the per-round ratio, the Wilcoxon signed-rank test), else as benchstat does:
// the ratio of the medians and the Mann–Whitney U test, with the interval of the
// two-sample Hodges–Lehmann ratio.
func CompareCells(base, head *GridCell) Change {
	if c, ok := compareExact(base, head); ok {
		return c
	}
	var c Change
	interval := func(lo, hi float64, ok bool) {
		if ok {
			l, h := math.Expm1(lo), math.Expm1(hi)
			c.Lo, c.Hi = &l, &h
		}
	}
	d, paired := pairedLogRatios(base, head)
	if len(d) > 0 {
		c.Pairs = len(d)
		est, lo, hi, ok := stats.HodgesLehmann(d, Confidence)
		c.Delta = math.Expm1(est)
		interval(lo, hi, ok)
		c.P = stats.SignedRankP(d)
		c.se, c.floor = stats.StdDev(d)/math.Sqrt(float64(len(d))), math.Ldexp(1, 1-len(d))
		return c
	}
	if paired {
		c.Unpaired = "a value ≤ 0 has no ratio: rounds compared unpaired (Mann–Whitney U), not paired"
	}
	if head.Cmp != nil && head.Base == base && !head.Exact { // an exact unit's comparison says p = 0 whatever the values
		c.P = head.Cmp.P
	} else {
		c.P = benchmath.AssumeNothing.Compare(base.Sample, head.Sample).P
	}
	m, n := len(base.Raw), len(head.Raw)
	c.floor = 2 / stats.Binomial(m+n, m)
	// benchstat's change: the ratio of the medians.
	if base.Summary.Center != 0 {
		c.Delta = head.Summary.Center/base.Summary.Center - 1
	}
	lb, lh := stats.Logs(base.Raw), stats.Logs(head.Raw)
	if lb == nil || lh == nil {
		// A ratio needs positive values: no interval.
		c.FromZero = risesFromZero(base.Raw, head.Raw)
		c.se = math.NaN()
		return c
	}
	_, lo, hi, ok := stats.TwoSampleHL(lb, lh, Confidence)
	interval(lo, hi, ok)
	sb, sh := stats.StdDev(lb), stats.StdDev(lh)
	c.se = math.Sqrt(sb*sb/float64(m) + sh*sh/float64(n))
	return c
}

// compareExact settles, without sampling statistics, the pairs that need none:
// zero in every run on both sides is no change (p = 1, an interval of [0, 0]),
// whatever the unit; a unit declared exact (assume=exact) whose runs repeated one
// value on each side changed by exactly the ratio of the two (p = 0 if they
// differ, 1 if not), or rose from zero (FromZero, p = 0). ok is false for every
// other pair, an exact unit whose runs varied included: statistics judge those.
func compareExact(base, head *GridCell) (c Change, ok bool) {
	b, bConst := constant(base.Raw)
	h, hConst := constant(head.Raw)
	if !bConst || !hConst || !(b == 0 && h == 0 || base.Exact && head.Exact) {
		return Change{}, false
	}
	c.P = 1
	switch {
	case b == h:
	case b == 0 && h < 0:
		return Change{}, false // no ratio and no rise: the statistics say what they can
	case b == 0:
		c.P, c.FromZero = 0, true
	default:
		c.P, c.Delta = 0, h/b-1
	}
	if !c.FromZero {
		d := c.Delta
		c.Lo, c.Hi = &d, &d
	}
	return c, true
}

// constant is the one value of v, if every value is it.
func constant(v []float64) (float64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	for _, x := range v[1:] {
		if x != v[0] {
			return 0, false
		}
	}
	return v[0], true
}

// risesFromZero: base is zero in every run; head is nowhere below zero and
// somewhere above it.
func risesFromZero(base, head []float64) bool {
	if b, ok := constant(base); !ok || b != 0 {
		return false
	}
	return slices.Min(head) >= 0 && slices.Max(head) > 0
}

// classify applies significance, threshold and direction, then equivalence.
func classify(f Finding, alpha float64) Status {
	bad := func(d float64) bool { return d != 0 && (d > 0) != (f.Better > 0) }
	if f.FromZero { // a rise with no ratio: beyond any threshold, if significant
		switch {
		case f.PAdjusted > alpha:
			return Inconclusive
		case bad(1):
			return Regression
		}
		return Improvement
	}
	if f.PAdjusted <= alpha && math.Abs(f.Delta) > f.Threshold {
		if bad(f.Delta) {
			return Regression
		}
		return Improvement
	}
	lo, hi := f.interval()
	badBound := lo // the interval's end on the bad side
	if f.Better < 0 {
		badBound = hi
	}
	if !bad(badBound) || math.Abs(badBound) <= f.Threshold {
		return NoRegression
	}
	return Inconclusive
}

// keepConfirmed keeps a regression of v only where again, the verdict of a fresh
// confirmation pass, shows it too; the others become Unconfirmed.
func keepConfirmed(v, again *Verdict) {
	confirmed := map[[2]string]Finding{}
	for _, f := range again.Findings {
		confirmed[[2]string{f.Cell, f.Unit}] = f
	}
	v.Regressions = 0
	for i := range v.Findings {
		f := &v.Findings[i]
		if f.Status != Regression {
			continue
		}
		v.Inconclusive++ // until the confirmation shows it again
		c, ok := confirmed[[2]string{f.Cell, f.Unit}]
		if ok {
			f.Confirm = &c.Head
		}
		if ok && c.Status == Regression {
			v.Regressions++
			v.Inconclusive--
		} else {
			f.Status = Unconfirmed
		}
	}
	v.Regression = v.Regressions > 0
}

// RegressedCells are the cells (labels) with a regression, in finding order.
func (v *Verdict) RegressedCells() []string {
	var out []string
	for _, f := range v.Findings {
		if f.Status == Regression && !slices.Contains(out, f.Cell) {
			out = append(out, f.Cell)
		}
	}
	return out
}

// medianOf is the median of values that may be +Inf (nothing detectable).
func medianOf(v []float64) float64 { return stats.MedianSorted(slices.Sorted(slices.Values(v))) }
