package traceplot

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/backfill-bench/backfill-bench/contract/jobtrace"
)

var textRE = regexp.MustCompile(`>([^<>]*)</text>`)

// svgTexts are the texts of a written SVG: titles, axis labels, ticks, legends.
func svgTexts(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range textRE.FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	return out
}

// TestPlotsReadInSeconds: each plot's title names what it shows and which way is
// better, and its value axes tick in SI units, never raw numbers.
func TestPlotsReadInSeconds(t *testing.T) {
	tr := jobtrace.Trace{Cell: "profile=mem/workload=narrow/rows=1000/persist=on", WallSec: 1}
	for i := range 20 {
		tr.Epochs = append(tr.Epochs, jobtrace.TraceEpoch{Epoch: uint64(i + 2), AtSec: float64(i) * 0.05, LatencySec: 2e-6 * float64(i+1),
			SnapshotRows: 250000 * int64(20-i), UpstreamRows: 1000})
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		draw  func(base string) error
		want  []string // texts the plot must hold
		ticks []string // unit suffixes of which at least two ticks each
	}{
		{"barrier-cdf", func(b string) error {
			return BarrierCDF(Variants{Names: []string{"persist=on"}, Traces: [][]jobtrace.Trace{{tr}}}, b)
		}, []string{"Barrier latency of every barrier of every run (left is better)", "50 %", "100 %"}, []string{"µs"}},
		{"timeline", func(b string) error { return Timeline(tr, b) },
			[]string{"barrier latency (lower is better)", "time since the first barrier"}, []string{"M rows", "µs", "ms"}},
	} {
		base := filepath.Join(dir, tc.name)
		if err := tc.draw(base); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		texts := svgTexts(t, base+".svg")
		all := strings.Join(texts, "|")
		for _, w := range tc.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s: no %q in %s", tc.name, w, all)
			}
		}
		for _, suffix := range tc.ticks {
			n := 0
			for _, s := range texts {
				if strings.HasSuffix(s, " "+suffix) {
					n++
				}
			}
			if n < 2 {
				t.Errorf("%s: %d ticks in %s, want 2 or more: %s", tc.name, n, suffix, all)
			}
		}
		for _, s := range texts {
			if regexp.MustCompile(`^-?\d+\.\d{2,}$|e[-+]\d|\d{5,}`).MatchString(s) {
				t.Errorf("%s: raw number %q", tc.name, s)
			}
		}
	}
}
