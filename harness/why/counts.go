package why

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/backfill-bench/backfill-bench/contract/jobtrace"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/pprofdiff"
	"github.com/backfill-bench/backfill-bench/internal/callgrind"
)

// Counts explains every regressed cell of v by the functions whose own
// instructions in the job window grew most, from the callgrind dumps the measured
// jobs left beside their traces (no job runs again): the mean per job on each side.
func Counts(v *judge.Verdict, traces [2][]string) []judge.Why {
	var whys []judge.Why
	var cells []string
	for _, f := range v.Findings {
		if f.Status == judge.Regression && !slices.Contains(cells, f.Cell) {
			cells = append(cells, f.Cell)
		}
	}
	for _, cell := range cells {
		w := judge.Why{Cell: cell}
		var sides [2]map[string]float64
		var err error
		for i := range sides {
			if sides[i], err = meanFunctions(traces[i], cell); err != nil {
				break
			}
		}
		if err != nil {
			w.Error = err.Error()
		} else {
			w.Instructions = diffFunctions(sides[0], sides[1], top)
		}
		whys = append(whys, w)
	}
	return whys
}

// meanFunctions is the mean instructions per function over the jobs of cell whose
// traces are given, from the callgrind window dump beside each trace.
func meanFunctions(traces []string, cell string) (map[string]float64, error) {
	sum := map[string]float64{}
	jobs := 0
	for _, tr := range traces {
		ts, err := jobtrace.ReadTraceFile(tr)
		if err != nil || len(ts) == 0 || ts[0].Cell != cell {
			continue
		}
		funcs, err := callgrind.ReadFunctions(strings.TrimSuffix(tr, ".jsonl") + ".callgrind.out.1")
		if err != nil {
			return nil, err
		}
		for fn, n := range funcs {
			sum[fn] += float64(n)
		}
		jobs++
	}
	if jobs == 0 {
		return nil, fmt.Errorf("no callgrind dump of %s beside its traces", cell)
	}
	for fn := range sum {
		sum[fn] /= float64(jobs)
	}
	return sum, nil
}

// diffFunctions lists the top functions by added instructions, head over base.
func diffFunctions(base, head map[string]float64, top int) *pprofdiff.Diff {
	d := &pprofdiff.Diff{Unit: "instructions"}
	for fn, n := range base {
		d.BaseTotal += n
		if head[fn] <= n {
			continue
		}
		d.Flat = append(d.Flat, pprofdiff.Func{Name: fn, Base: n, Head: head[fn], Delta: head[fn] - n})
	}
	for fn, n := range head {
		d.HeadTotal += n
		if _, ok := base[fn]; !ok {
			d.Flat = append(d.Flat, pprofdiff.Func{Name: fn, Head: n, Delta: n})
		}
	}
	slices.SortFunc(d.Flat, func(a, b pprofdiff.Func) int {
		if a.Delta != b.Delta {
			return cmp.Compare(b.Delta, a.Delta)
		}
		return strings.Compare(a.Name, b.Name)
	})
	if len(d.Flat) > top {
		d.Flat = d.Flat[:top]
	}
	return d
}
