package harness

import (
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
