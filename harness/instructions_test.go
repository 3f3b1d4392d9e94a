package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/judge"
)

// TestCheckCounts: counts compare only under one valgrind and one set of
// settings, on both sides; wall-clock results on both sides need no note.
func TestCheckCounts(t *testing.T) {
	res := func(valgrind, settings string) *benchfmt.Result {
		r := &benchfmt.Result{Name: benchfmt.Name("Backfill/x"), Iters: 1}
		if valgrind != "" {
			r.SetConfig(contract.ConfigValgrind, valgrind)
			r.SetConfig(contract.ConfigValgrindSettings, settings)
		}
		return r
	}
	a := res("valgrind-3.19.0", "--tool=callgrind GOGC=off")
	for _, tt := range []struct {
		name       string
		base, head []*benchfmt.Result
		note, err  string
	}{
		{"wall clock", []*benchfmt.Result{res("", "")}, []*benchfmt.Result{res("", "")}, "", ""},
		{"same", []*benchfmt.Result{a, a}, []*benchfmt.Result{a}, "instructions/row decides", ""},
		{"other valgrind", []*benchfmt.Result{a}, []*benchfmt.Result{res("valgrind-3.22.0", "--tool=callgrind GOGC=off")}, "", "head has valgrind-3.22.0"},
		{"other settings", []*benchfmt.Result{a}, []*benchfmt.Result{res("valgrind-3.19.0", "--tool=callgrind")}, "", "base has valgrind-3.19.0 --tool=callgrind GOGC=off, head has valgrind-3.19.0 --tool=callgrind;"},
		{"one side counted", []*benchfmt.Result{a}, []*benchfmt.Result{res("", "")}, "", "head has not counted (--measure time)"},
		{"mixed on a side", []*benchfmt.Result{a, res("", "")}, []*benchfmt.Result{a}, "", "base has not counted (--measure time); valgrind-3.19.0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			note, err := checkCounts(tt.base, tt.head)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil || !strings.Contains(note, tt.note) || (tt.note == "") != (note == "") {
				t.Fatalf("note %q, err %v; want a note saying %q", note, err, tt.note)
			}
		})
	}
}

// TestInstructionThresholds: counted compares judge instructions/row at 1 % and
// the exact figures, and no wall-clock unit.
func TestInstructionThresholds(t *testing.T) {
	th := judge.InstructionThresholds()
	if th[contract.UnitInstrPerRow] != 0.01 || th[contract.UnitWriteAmp] == 0 || th[contract.UnitAllocs] == 0 {
		t.Errorf("thresholds %v: want instructions/row at 1 %% and write-amp, job-allocs/op judged", th)
	}
	for _, u := range []string{contract.UnitSteadyRows, contract.Tidy(contract.UnitSteadyCPU), contract.UnitBarrierP50, contract.UnitRecoverySec} {
		if _, ok := th[u]; ok {
			t.Errorf("wall-clock unit %s is judged when counting instructions", u)
		}
	}
	if _, ok := judge.DefaultThresholds()[contract.UnitInstrPerRow]; ok {
		t.Error("instructions/row is judged by default, where no job is counted")
	}
}

// TestExplainCounts: a regressed cell's why lists the functions whose own
// instructions grew, the mean over its jobs on each side, from the dumps beside
// the traces; other cells' jobs are left out.
func TestExplainCounts(t *testing.T) {
	dir := t.TempDir()
	job := func(side string, round int, cell string, funcs string) string {
		tr := filepath.Join(dir, fmt.Sprintf("%s-%d.jsonl", side, round))
		if err := os.WriteFile(tr, []byte(`{"cell":"`+cell+`"}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		dump := "desc: Trigger: Client Request\nevents: Ir\n" + funcs
		if err := os.WriteFile(strings.TrimSuffix(tr, ".jsonl")+".callgrind.out.1", []byte(dump), 0o644); err != nil {
			t.Fatal(err)
		}
		return tr
	}
	const cell = "profile=mem/workload=narrow"
	traces := [2][]string{
		{job("base", 1, cell, "fn=(1) scan\n1 100\nfn=(2) merge\n1 50\n"), job("base", 2, cell, "fn=(1) scan\n1 110\nfn=(2) merge\n1 50\n"),
			job("base", 3, "other", "fn=(1) scan\n1 9999\n")},
		{job("head", 1, cell, "fn=(1) scan\n1 105\nfn=(2) merge\n1 90\nfn=(3) spin\n1 20\n"), job("head", 2, cell, "fn=(1) scan\n1 105\nfn=(2) merge\n1 90\nfn=(3) spin\n1 20\n")},
	}
	v := &judge.Verdict{Findings: []judge.Finding{{Cell: cell, Unit: contract.UnitInstrPerRow, Status: judge.Regression}}}
	explainCounts(v, traces)
	if len(v.Why) != 1 || v.Why[0].Error != "" || v.Why[0].Instructions == nil {
		t.Fatalf("why %+v: want the instructions of one cell", v.Why)
	}
	d := v.Why[0].Instructions
	if d.BaseTotal != 155 || d.HeadTotal != 215 {
		t.Errorf("totals %g, %g: want the means per job, 155 and 215", d.BaseTotal, d.HeadTotal)
	}
	var got []string
	for _, f := range d.Flat {
		got = append(got, fmt.Sprintf("%s %+g", f.Name, f.Delta))
	}
	if want := []string{"merge +40", "spin +20"}; !slices.Equal(got, want) {
		t.Errorf("functions %q, want %q (scan did not grow)", got, want)
	}
}
