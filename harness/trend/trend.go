// Package trend gathers each (cell, metric) series over an ordered list of results
// files: the one series type of the nightly history, its trend plots and the site.
package trend

import (
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"golang.org/x/perf/benchfmt"
)

// File is one results file of a series, such as a night.
type File struct {
	Results []*benchfmt.Result
	Units   benchfmt.UnitMetadataMap
}

// Point is a cell's metric in one file: the median of its samples and the
// median's 95 % confidence interval (infinite where too few samples).
type Point struct {
	File           int // index of the file in Collect's argument
	Median, Lo, Hi float64
	Samples        []float64
}

// Series is one (cell, metric) over the files that measured it, oldest first.
type Series struct {
	Cell, Unit string // the cell's name without the Benchmark prefix; the metric
	Better     int    // +1 higher is better, −1 lower, 0 unknown
	Points     []Point
}

// Collect returns every (cell, metric) series of files whose metric keep accepts
// (nil keeps every one), in the order they first appear.
func Collect(files []File, keep func(unit string, better int) bool) ([]Series, error) {
	at := map[[2]string]int{}
	var out []Series
	for fi, f := range files {
		g, err := judge.NewGrid(judge.GridConfig{Table: judge.UnitOnly, Col: ".file"}, f.Results, f.Units)
		if err != nil {
			return nil, err
		}
		for _, t := range g.Tables {
			if keep != nil && !keep(t.Unit, t.Better) {
				continue
			}
			for _, row := range t.Rows {
				for _, col := range t.Cols {
					c := t.Cells[judge.GridKey{Row: row, Col: col}]
					if c == nil {
						continue
					}
					k := [2]string{contract.Label(row.StringValues()), t.Unit}
					i, ok := at[k]
					if !ok {
						i = len(out)
						at[k] = i
						out = append(out, Series{Cell: k[0], Unit: k[1], Better: t.Better})
					}
					out[i].Points = append(out[i].Points, Point{File: fi, Median: c.Summary.Center, Lo: c.Summary.Lo, Hi: c.Summary.Hi, Samples: c.Sample.Values})
				}
			}
		}
	}
	return out, nil
}

// Medians are the series' medians, point by point.
func (s Series) Medians() []float64 {
	out := make([]float64, len(s.Points))
	for i, p := range s.Points {
		out[i] = p.Median
	}
	return out
}
