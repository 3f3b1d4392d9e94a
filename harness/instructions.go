package harness

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/jobtrace"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/pprofdiff"
	"github.com/backfill-bench/backfill-bench/harness/runner"
	"github.com/backfill-bench/backfill-bench/internal/callgrind"
)

// What --measure takes: wall-clock time (each job alone or in a duet), or the
// instructions of each job's window counted under callgrind.
const (
	MeasureTime         = "time"
	MeasureInstructions = "instructions"
)

// instructions checks that this machine can count and says with which valgrind;
// nil when the measure is wall-clock time.
func (m Measure) instructions(ctx context.Context) (*runner.Instructions, error) {
	switch m.By {
	case "", MeasureTime:
		return nil, nil
	case MeasureInstructions:
		version, err := callgrind.Check(ctx)
		if err != nil {
			return nil, err
		}
		return &runner.Instructions{Valgrind: version}, nil
	}
	return nil, fmt.Errorf("--measure %q: want time or instructions", m.By)
}

// countedWith is how a side's results were counted: the distinct valgrind
// versions and settings of its results, "" for results not counted.
func countedWith(results []*benchfmt.Result) []string {
	var out []string
	for _, r := range results {
		k := ""
		if v := r.GetConfig(contract.ConfigValgrind); v != "" {
			k = v + " " + r.GetConfig(contract.ConfigValgrindSettings)
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// checkCounts refuses to judge instruction counts taken with different valgrind
// versions or settings (or counted on one side only): they are not comparable.
// The note says that counts decide, when they do.
func checkCounts(base, head []*benchfmt.Result) (note string, err error) {
	b, h := countedWith(base), countedWith(head)
	if len(b) == 1 && b[0] == "" && len(h) == 1 && h[0] == "" {
		return "", nil // wall-clock on both sides
	}
	if !slices.Equal(b, h) || len(b) != 1 {
		say := func(s []string) string {
			for i, k := range s {
				if k == "" {
					s[i] = "not counted (--measure time)"
				}
			}
			return strings.Join(s, "; ")
		}
		return "", fmt.Errorf("compare: instruction counts are comparable only under one valgrind version and one set of settings: base has %s, head has %s; measure both sides again with the same valgrind (--measure instructions)", say(b), say(h))
	}
	return fmt.Sprintf("measured by instructions: %s decides (with write-amp and job-allocs/op); each job's window (first barrier to last commit) counted under callgrind (%s). Wall-clock figures of these runs (under valgrind, one P, 20–50× slower) are in metrics.txt, not judged",
		contract.UnitInstrPerRow, b[0]), nil
}

// explainCounts adds to v.Why, for every regressed cell, the functions whose own
// instructions in the job window grew most, from the callgrind dumps the measured
// jobs left beside their traces (no job runs again): the mean per job on each side.
func explainCounts(v *judge.Verdict, traces [2][]string) {
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
			w.Instructions = diffFunctions(sides[0], sides[1], whyTop)
		}
		v.Why = append(v.Why, w)
	}
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
