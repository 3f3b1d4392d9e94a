package spread

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/backfill-bench/backfill-bench/harness/judge"
)

// TestNoiseDiagnosis: the noise table says how much of their variance the runs of a
// round share (what pairing cancels), judged on the metrics that move at all.
func TestNoiseDiagnosis(t *testing.T) {
	o := judge.Options{Thresholds: judge.DefaultThresholds(), Alpha: 0.05}
	row := func(unit string, sd, corr float64) Row {
		return Row{Cell: "c", Unit: unit, N: 10, RunCV: sd, PairSD: sd, PairCorr: corr, Detectable: math.Inf(1)}
	}
	for _, tc := range []struct {
		rows []Row
		want string
	}{
		{[]Row{row("rows/s", 0.1, 0.1), row("cpu-ns/row", 0.1, 0.2), row("write-amp", 0, math.NaN())}, "share 15 % of their variance (median pair corr +0.15 over 2 varying metrics"},
		{[]Row{row("rows/s", 0.1, 0.9), row("write-amp", 0.001, -0.5)}, "share 90 % of their variance (median pair corr +0.90 over 1 varying metrics"},
		{[]Row{row("rows/s", 0.1, 0.5), row("cpu-ns/row", 0.1, -0.2), row("barrier-p50-sec", 0.2, 0.3)}, "share 30 % of their variance (median pair corr +0.30 over 3 varying metrics"},
		{[]Row{row("write-amp", 0, math.NaN())}, ""},
	} {
		var b bytes.Buffer
		Write(&b, tc.rows, o, false)
		out := b.String()
		if tc.want == "" && strings.Contains(out, "pair corr +") || tc.want != "" && !strings.Contains(out, tc.want) {
			t.Errorf("want %q in:\n%s", tc.want, out)
		}
	}
}
