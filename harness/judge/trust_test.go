package judge

import (
	"github.com/backfill-bench/backfill-bench/harness/stats"

	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/contract"
)

// TestCellThresholds: a cell rule overrides the unit's threshold in the cells it
// matches only, in both directions (a looser one passes a change the default
// flags; a stricter one flags a change the default passes).
func TestCellThresholds(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	g := synthetic(t, map[string][2][]float64{
		"workload=bid|write-amp":    {sample(rng, 10, 100, 0.002), sample(rng, 10, 105, 0.002)},
		"workload=narrow|write-amp": {sample(rng, 10, 100, 0.002), sample(rng, 10, 105, 0.002)},
		"workload=wide|write-amp":   {sample(rng, 10, 100, 0.002), sample(rng, 10, 101, 0.002)},
	})
	o := Options{Thresholds: DefaultThresholds(), Correction: Holm, Alpha: 0.05, CellThresholds: []CellThreshold{
		{Cell: "workload=bid", Unit: contract.UnitWriteAmp, Threshold: 0.10},
		{Cell: "workload=wide", Unit: contract.UnitWriteAmp, Threshold: 0.005},
	}}
	v, err := Judge(g, o)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Status{"workload=bid": NoRegression, "workload=narrow": Regression, "workload=wide": Regression}
	for _, f := range v.Findings {
		if f.Status != want[f.Cell] {
			t.Errorf("%s: %s (threshold %g), want %s", f.Cell, f.Status, f.Threshold, want[f.Cell])
		}
	}
}

// TestLoadThresholdsFile: both formats load; the repository's thresholds.json is
// the defaults, so passing it changes nothing; a bad rule names the file and rule.
func TestLoadThresholdsFile(t *testing.T) {
	o := Options{Thresholds: Thresholds{}}
	if err := o.Load(filepath.Join("..", "..", "thresholds.json")); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o.Thresholds, DefaultThresholds()) || len(o.CellThresholds) != 0 {
		t.Errorf("thresholds.json: %v %v, want the defaults %v", o.Thresholds, o.CellThresholds, DefaultThresholds())
	}
	dir := t.TempDir()
	for _, tc := range []struct{ name, text, err string }{
		{"flat", `{"rows/s": "5%"}`, ""},
		{"cells", `{"units": {"rows/s": 5}, "cells": [{"cell": "persist=on", "unit": "ns/op", "threshold": "8%"}]}`, ""},
		{"bad regexp", `{"cells": [{"cell": "(", "unit": "rows/s", "threshold": "8%"}]}`, "cells[0]: cell \"(\""},
		{"bad unit", `{"cells": [{"cell": "x", "unit": "rows/", "threshold": "8%"}]}`, "cells[0]: threshold rows/=8%: unknown unit"},
		{"unknown key", `{"units": {}, "cell": []}`, "unknown field"},
	} {
		f := filepath.Join(dir, tc.name+".json")
		os.WriteFile(f, []byte(tc.text), 0o644)
		o := Options{Thresholds: Thresholds{}}
		err := o.Load(f)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), f)):
			t.Errorf("%s: err %v, want it to name %s and %q", tc.name, err, f, tc.err)
		case tc.name == "cells" && (o.Thresholds["rows/s"] != 0.05 || o.cellThreshold("persist=on/x", "sec/op") != 0.08 || o.cellThreshold("persist=off", "sec/op") != 0):
			t.Errorf("cells: %v %+v", o.Thresholds, o.CellThresholds)
		}
	}
}

// TestStandIns: results without the steady-state throughput have their whole-job
// throughput judged at its threshold (rows/s before sec/op), and the verdict says
// so; results that have it in any cell judge no whole-job unit (a recovery cell is
// not a steady state).
func TestStandIns(t *testing.T) {
	for _, tc := range []struct {
		name  string
		units []string // of the second cell
		want  map[string]string
		note  string
	}{
		{"no steady state", []string{"rows/s", "sec/op"},
			map[string]string{"a|sec/op": "regression steady-rows/s", "b|sec/op": "not judged ", "b|rows/s": "regression steady-rows/s"},
			"rows/s judged in place of steady-rows/s (its 3% threshold) in 1 cells"},
		{"a steady state elsewhere", []string{"rows/s", "steady-rows/s"},
			map[string]string{"a|sec/op": "not judged ", "b|rows/s": "not judged ", "b|steady-rows/s": "regression "}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 3))
			samples := map[string][2][]float64{"a|sec/op": {sample(rng, 10, 100, 0.002), sample(rng, 10, 110, 0.002)}}
			for _, u := range tc.units {
				shift := 1.1
				if contract.Better(nil, u) > 0 {
					shift = 0.91
				}
				samples["b|"+u] = [2][]float64{sample(rng, 10, 100, 0.002), sample(rng, 10, 100*shift, 0.002)}
			}
			v, err := Judge(synthetic(t, samples), Options{Thresholds: DefaultThresholds(), Correction: Holm, Alpha: 0.05})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, f := range v.Findings {
				got[f.Cell+"|"+f.Unit] = f.Status.String() + " " + f.StandsFor
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("findings %v, want %v", got, tc.want)
			}
			if notes := strings.Join(v.Notes, "\n"); !strings.Contains(notes, tc.note) || tc.note == "" && notes != "" {
				t.Errorf("notes %q, want %q", notes, tc.note)
			}
		})
	}
}

// TestPairedZerosAndNonPositive: zero differences leave the signed-rank test and
// the Hodges–Lehmann estimate alike; all-zero differences are no change; a value
// ≤ 0 compares the rounds unpaired, with a note.
func TestPairedZerosAndNonPositive(t *testing.T) {
	est, lo, hi, ok := stats.HodgesLehmann([]float64{0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3}, 0.95)
	if wantEst, _, _, _ := stats.HodgesLehmann([]float64{1, 2, 3}, 0.95); est != wantEst || ok {
		t.Errorf("with zeros: est %v [%v, %v] ok=%v, want the estimate of the nonzero differences %v and no interval at n = 3", est, lo, hi, ok, wantEst)
	}
	if est, lo, hi, ok := stats.HodgesLehmann([]float64{0, 0, 0, 0}, 0.95); est != 0 || lo != 0 || hi != 0 || !ok {
		t.Errorf("all zeros: %v [%v, %v] %v, want 0 [0, 0]", est, lo, hi, ok)
	}
	base, head := pairedSides(rand.New(rand.NewPCG(5, 5)), 1, 8, contract.UnitWriteAmp, 0, 0.01)
	base.Results[3].Values[0].Value = 0
	v, _, err := Compare(base, head, contract.UnitMap(), Options{Thresholds: DefaultThresholds(), Correction: Holm, Alpha: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if f := v.Findings[0]; f.Pairs != 0 || !strings.Contains(strings.Join(v.Notes, "\n"), "a value ≤ 0 has no ratio: rounds compared unpaired") {
		t.Errorf("pairs %d, notes %q", f.Pairs, v.Notes)
	}
}

// TestProcsSuffixAndOrder: rows that differ only by -N keep it, and the findings'
// order does not change from run to run.
func TestProcsSuffixAndOrder(t *testing.T) {
	var base, head Side
	add := func(s *Side, name string, v float64) {
		for i := range 6 {
			s.Results = append(s.Results, &benchfmt.Result{Name: benchfmt.Name(name), Iters: 1, Values: []benchfmt.Value{{Value: v + float64(i), Unit: "sec/op"}}})
		}
	}
	add(&base, "Scan-2", 100)
	add(&head, "Scan-2", 100)
	add(&base, "Merge-8", 200)
	add(&head, "Merge-4", 200)
	add(&base, "Zip-2", 50)
	add(&head, "Zip-2", 50)
	var first []string
	for range 20 {
		v, _, err := Compare(base, head, nil, Options{Thresholds: DefaultThresholds(), Correction: Holm, Alpha: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range v.Findings {
			got = append(got, f.Cell)
		}
		for _, l := range v.Lost {
			got = append(got, l.String())
		}
		if first == nil {
			first = got
		} else if !reflect.DeepEqual(got, first) {
			t.Fatalf("order changed: %v then %v", first, got)
		}
	}
	want := []string{"Scan", "Zip", "Merge-8 (sec/op) in base only", "Merge-4 (sec/op) in head only"}
	if !reflect.DeepEqual(first, want) {
		t.Errorf("cells %v, want %v", first, want)
	}
}
