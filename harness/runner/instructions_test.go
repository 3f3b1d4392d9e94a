package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
)

// TestAddInstructions: a job's window count is divided by its trace's rows
// (snapshot and upstream) and barriers, and a binary that opened no window, or
// left no trace, fails the run saying why.
func TestAddInstructions(t *testing.T) {
	window := "desc: Trigger: Client Request\nevents: Ir\nsummary: 0\ntotals: 1200000\n"
	trace := `{"cell":"c","snapshot_rows":1000,"upstream_rows":200,"epochs":[{"epoch":2},{"epoch":3},{"epoch":4}]}` + "\n"
	for _, tt := range []struct {
		name          string
		window, trace string // "" : none
		perRow, perB  float64
		err           string
	}{
		{"counted", window, trace, 1000, 400000, ""},
		{"no window", "", trace, 0, 0, "opens none"},
		{"no trace", window, "", 0, 0, "wrote no trace"},
		{"empty job", window, `{"cell":"c"}` + "\n", 0, 0, "nothing to count"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "job.callgrind.out")
			write := func(name, text string) {
				if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write(out, "desc: Trigger: Program termination\nevents: Ir\ntotals: 5\n")
			if tt.window != "" {
				write(out+".1", tt.window)
			}
			o := outcome{units: benchfmt.UnitMetadataMap{}, results: []*benchfmt.Result{{Name: benchfmt.Name("Backfill/x"), Iters: 1}}}
			if tt.trace != "" {
				o.trace = filepath.Join(dir, "job.jsonl")
				write(o.trace, tt.trace)
			}
			err := addInstructions(&o, out)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]float64{}
			for _, v := range o.results[0].Values {
				got[v.Unit] = v.Value
			}
			if got[contract.UnitInstrPerRow] != tt.perRow || got[contract.UnitInstrPerBarrier] != tt.perB {
				t.Errorf("values %v, want %g instructions/row and %g instructions/barrier", got, tt.perRow, tt.perB)
			}
			if contract.Better(o.units, contract.UnitInstrPerRow) >= 0 {
				t.Errorf("instructions/row is not lower-is-better in the units %v", o.units)
			}
		})
	}
}

// TestUnderCallgrind: a counted job runs its bench binary, with its arguments,
// under valgrind with the recorded settings, which override a profile's GOMAXPROCS.
func TestUnderCallgrind(t *testing.T) {
	p := &pass{cfg: PassConfig{Dir: t.TempDir(), Instructions: &Instructions{Valgrind: "valgrind-3.19.0"}}}
	s := Side{Label: "head", Binary: "/bin/bench.test"}
	cell := contract.Cell{Profile: "mem", Workload: "narrow", Rows: 1000, Scan: "merged", Par: 2}
	j, o := p.newJob(context.Background(), s, profile.Profile{Name: "mem", CPUs: 2}, Trial{Cell: cell, Round: 1}, 0)
	if j == nil {
		t.Fatal(o.failure)
	}
	defer j.proc.Close()
	args := j.proc.Args
	if filepath.Base(args[0]) != "valgrind" || !slices.Contains(args, "--tool=callgrind") || !slices.Contains(args, "--instr-atstart=no") ||
		!slices.Contains(args, "--callgrind-out-file="+j.callgrindOut) || !slices.Contains(args, "/bin/bench.test") {
		t.Fatalf("command %q: want valgrind's callgrind running the bench binary", args)
	}
	if i := slices.Index(args, "/bin/bench.test"); !slices.Equal(args[i+1:], cell.Args(j.tmpTrace, nil)) {
		t.Errorf("the bench binary's arguments %q, want %q", args[i+1:], cell.Args(j.tmpTrace, nil))
	}
	last := map[string]string{}
	for _, kv := range j.proc.Env {
		k, v, _ := strings.Cut(kv, "=")
		last[k] = v
	}
	if last["GOMAXPROCS"] != "1" || last["GOGC"] != "off" || last["GODEBUG"] != "cpu.rdtscp=off,asyncpreemptoff=1" {
		t.Errorf("environment GOMAXPROCS=%s GOGC=%s GODEBUG=%s: want the counting settings to win", last["GOMAXPROCS"], last["GOGC"], last["GODEBUG"])
	}
}
