package why

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/judge"
)

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
	whys := Counts(v, traces)
	if len(whys) != 1 || whys[0].Error != "" || whys[0].Instructions == nil {
		t.Fatalf("why %+v: want the instructions of one cell", whys)
	}
	d := whys[0].Instructions
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
