package render

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/harness/judge"
)

// TestExactUnitsPrintAsBenchstat: a unit of exact values (assume=exact) shows its
// change with no p-value, "0.00% (n=3)" when equal, as benchstat prints it.
func TestExactUnitsPrintAsBenchstat(t *testing.T) {
	var results []*benchfmt.Result
	for _, side := range []struct {
		file  string
		value float64
	}{{"base", 120}, {"head", 120}} {
		for range 3 {
			results = append(results, &benchfmt.Result{Name: benchfmt.Name("X"), Iters: 1,
				Config: []benchfmt.Config{{Key: ".file", Value: []byte(side.file)}},
				Values: []benchfmt.Value{{Value: side.value, Unit: "barriers"}}})
		}
	}
	units := benchfmt.UnitMetadataMap{{Unit: "barriers", Key: "assume"}: {UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: "barriers", Key: "assume"}, Value: "exact"}}
	g, err := judge.NewGrid(judge.GridConfig{Col: ".file@(base head)"}, results, units)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteMetrics(&b, g, "benchstat"); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "0.00% (n=3)") || strings.Contains(out, "p=0.000") {
		t.Errorf("metrics:\n%s\nwant 0.00%% (n=3) and no p-value", out)
	}
}

// TestExpectedRegressionCheckRun: a regression let pass by --expected-regression is
// a successful check titled with its reason; a failed head job is not let pass.
func TestExpectedRegressionCheckRun(t *testing.T) {
	v := &judge.Verdict{Correction: judge.Holm, Alpha: 0.05, Regression: true, Regressions: 1,
		Findings:           []judge.Finding{{Cell: "c", Unit: "sec/op", Better: -1, Threshold: 0.03, Status: judge.Regression}},
		ExpectedRegression: "checksums on every read (#12)"}
	if c := NewCheckRun(v, false); c.Conclusion != "success" || !strings.Contains(c.Output.Title, "EXPECTED REGRESSION (checksums on every read (#12))") {
		t.Errorf("expected: %+v", c)
	}
	v.FailedInHead = []string{"d"}
	if c := NewCheckRun(v, false); c.Conclusion != "failure" {
		t.Errorf("failed in head: %+v", c)
	}
}
