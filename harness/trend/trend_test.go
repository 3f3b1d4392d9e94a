package trend

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/contract"
)

// file is a results file of cells, each with five samples of rows/s and
// write-amp at its level.
func file(levels map[string]float64) File {
	f := File{Units: contract.UnitMap()}
	for _, cell := range slices.Sorted(maps.Keys(levels)) {
		for k := range 5 {
			f.Results = append(f.Results, &benchfmt.Result{
				Name:  benchfmt.Name("Backfill/" + cell + "-2"),
				Iters: 1,
				Values: []benchfmt.Value{{Value: levels[cell] * (1 + 0.001*float64(k)), Unit: contract.UnitRowsPerSec},
					{Value: 3, Unit: contract.UnitWriteAmp}},
			})
		}
	}
	return f
}

// TestCollect: a series per (cell, metric) in the order of first appearance,
// points at the indices of the files that measured the cell, keep filtering
// metrics, cells named without the Benchmark prefix.
func TestCollect(t *testing.T) {
	a, b := "profile=mem/workload=narrow/rows=1/persist=on", "profile=mem/workload=bid/rows=1/persist=on"
	files := []File{file(map[string]float64{a: 100}), file(map[string]float64{a: 110, b: 50}), file(map[string]float64{b: 55})}
	for _, tc := range []struct {
		name string
		keep func(string, int) bool
		want []string // cell unit files medians
	}{
		{"every metric", nil, []string{
			a + " rows/s [0 1] [100.2 110.22]",
			a + " write-amp [0 1] [3 3]",
			b + " rows/s [1 2] [50.1 55.11]",
			b + " write-amp [1 2] [3 3]",
		}},
		{"rows/s only", func(u string, better int) bool { return u == contract.UnitRowsPerSec && better == 1 }, []string{
			a + " rows/s [0 1] [100.2 110.22]",
			b + " rows/s [1 2] [50.1 55.11]",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			series, err := Collect(files, tc.keep)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range series {
				var at []int
				for _, p := range s.Points {
					at = append(at, p.File)
					if len(p.Samples) != 5 || p.Lo > p.Median || p.Hi < p.Median {
						t.Errorf("%s %s: point %+v", s.Cell, s.Unit, p)
					}
				}
				got = append(got, fmt.Sprintf("%s %s %v %v", s.Cell, s.Unit, at, s.Medians()))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
