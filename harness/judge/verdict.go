package judge

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"

	"github.com/backfill-bench/backfill-bench/contract"
)

// Status is what a finding says about its (cell, metric) pair.
type Status int

// Statuses, in the order a report lists them after sorting worst first.
const (
	NotJudged   Status = iota // no threshold or no direction for the unit
	NoChange                  // not significant, or within the threshold
	Improvement               // significant and beyond the threshold, the good way
	Regression                // significant and beyond the threshold, the bad way
	Unconfirmed               // a regression the confirmation pass did not see again
)

var statusNames = []string{"not judged", "no change", "improvement", "regression", "unconfirmed"}

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
	Cell      string  `json:"cell"` // contract.Label of the benchmark name
	Unit      string  `json:"unit"`
	Better    int     `json:"better"` // +1 higher is better, −1 lower
	Base      Stat    `json:"base"`
	Head      Stat    `json:"head"`
	Delta     float64 `json:"delta"` // relative change of the median, head vs base
	P         float64 `json:"p"`     // Mann–Whitney U
	PAdjusted float64 `json:"p_adjusted"`
	Threshold float64 `json:"threshold"`
	Status    Status  `json:"status"`
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

// Options are what a verdict is judged by.
type Options struct {
	Thresholds Thresholds
	Correction string  // Holm or BH
	Alpha      float64 // significance after correction
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

// The column names of a comparison's grid.
const (
	SideBase = "base"
	SideHead = "head"
)

// Compare judges head's results against base's. Both are grouped as `benchstat
// -ignore contract.CompareIgnore base head` groups them: one table per unit and
// per distinct configuration, so results of different machines never meet. When
// nothing could be compared at all, the error says which configuration differs.
func Compare(base, head []*benchfmt.Result, units benchfmt.UnitMetadataMap, o Options) (*Verdict, *Grid, error) {
	var tagged []*benchfmt.Result
	for side, rs := range map[string][]*benchfmt.Result{SideBase: base, SideHead: head} {
		for _, r := range rs {
			r = r.Clone()
			r.SetConfig(".file", side)
			tagged = append(tagged, r)
		}
	}
	g, err := NewGrid(GridConfig{Col: ".file@(" + SideBase + " " + SideHead + ")", Ignore: contract.CompareIgnore}, tagged, units)
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
	if len(v.Findings) == 0 && len(base) > 0 && len(head) > 0 {
		return nil, nil, fmt.Errorf("compare: no cell and metric is on both sides%s", configDiff(base, head))
	}
	return v, g, nil
}

// configDiff names the configuration keys, not ignored by a comparison, whose
// values differ between the two sides.
func configDiff(base, head []*benchfmt.Result) string {
	ignored := strings.Split(contract.CompareIgnore, ",")
	values := func(rs []*benchfmt.Result) map[string]map[string]bool {
		out := map[string]map[string]bool{}
		for _, r := range rs {
			for _, c := range r.Config {
				if c.File && !slices.Contains(ignored, c.Key) {
					if out[c.Key] == nil {
						out[c.Key] = map[string]bool{}
					}
					out[c.Key][string(c.Value)] = true
				}
			}
		}
		return out
	}
	b, h := values(base), values(head)
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(b)) {
		bv, hv := slices.Sorted(maps.Keys(b[k])), slices.Sorted(maps.Keys(h[k]))
		if !slices.Equal(bv, hv) {
			diffs = append(diffs, fmt.Sprintf("%s: %s in base, %s in head", k, strings.Join(bv, " "), orNone(hv)))
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	msg := "; their configurations differ (" + strings.Join(diffs, "; ") + ")"
	if b[contract.ConfigMachine] != nil && !slices.Equal(slices.Sorted(maps.Keys(b[contract.ConfigMachine])), slices.Sorted(maps.Keys(h[contract.ConfigMachine]))) {
		msg += ": results of different machines are not comparable; measure both sides on one machine"
	}
	return msg
}

func orNone(v []string) string {
	if len(v) == 0 {
		return "none"
	}
	return strings.Join(v, " ")
}

// Judge turns a grid whose columns are base and head into findings. A finding is
// a regression only if its p-value, adjusted over every judged finding of the grid,
// is ≤ alpha and its change is beyond the unit's threshold in the bad direction. A
// table with one column only (a configuration on one side only) adds its rows to
// the cells only one side has.
func Judge(g *Grid, o Options) (*Verdict, error) {
	v := &Verdict{Correction: o.Correction, Alpha: o.Alpha}
	only := [2]map[string]bool{{}, {}} // base, head
	var judged []int
	var ps []float64
	for _, t := range g.Tables {
		if len(t.Cols) > 2 {
			return nil, fmt.Errorf("comparing needs two sides, have %d columns", len(t.Cols))
		}
		for _, row := range t.Rows {
			name := contract.Label(row.StringValues())
			var cells [2]*GridCell
			for _, col := range t.Cols {
				side := 0
				if col.StringValues() == SideHead {
					side = 1
				}
				cells[side] = t.Cells[GridKey{row, col}]
			}
			base, head := cells[0], cells[1]
			switch {
			case base == nil && head == nil:
				continue
			case head == nil:
				only[0][name] = true
				continue
			case base == nil:
				only[1][name] = true
				continue
			}
			f := Finding{Cell: name, Unit: t.Unit, Better: t.Better, Base: StatOf(base), Head: StatOf(head),
				P: head.Cmp.P, Threshold: o.Thresholds[t.Unit], Status: NotJudged}
			f.Delta, _ = head.Delta()
			if f.Threshold > 0 && t.Better != 0 {
				judged = append(judged, len(v.Findings))
				ps = append(ps, f.P)
			}
			v.Findings = append(v.Findings, f)
		}
	}
	adj, err := Adjust(o.Correction, ps)
	if err != nil {
		return nil, err
	}
	for k, i := range judged {
		f := &v.Findings[i]
		f.PAdjusted = adj[k]
		f.Status = classify(f.Delta, f.PAdjusted, f.Threshold, f.Better, o.Alpha)
		if f.Status == Regression {
			v.Regressions++
		}
	}
	v.Regression = v.Regressions > 0
	list := func(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }
	v.OnlyInBase, v.OnlyInHead = list(only[0]), list(only[1])
	return v, nil
}

// classify applies significance, threshold and direction.
func classify(delta, pAdj, threshold float64, better int, alpha float64) Status {
	if pAdj > alpha || math.Abs(delta) <= threshold {
		return NoChange
	}
	if (delta > 0) == (better > 0) {
		return Improvement
	}
	return Regression
}

// Confirm keeps a regression of v only where again, the verdict of a fresh
// confirmation pass, shows it too; the others become Unconfirmed.
func Confirm(v, again *Verdict) {
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
		c, ok := confirmed[[2]string{f.Cell, f.Unit}]
		if ok {
			f.Confirm = &c.Head
		}
		if ok && c.Status == Regression {
			v.Regressions++
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
