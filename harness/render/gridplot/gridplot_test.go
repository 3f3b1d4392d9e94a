package gridplot

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/judge"
)

var textRE = regexp.MustCompile(`>([^<>]*)</text>`)

// TestPlotsReadInSeconds draws the run fixture's plots: every tile's title names
// its metric and which way is better, the value axes tick in SI units (ms,
// k rows/s, MB), and no tick prints a raw number.
func TestPlotsReadInSeconds(t *testing.T) {
	results, units, err := contract.ReadFiles(filepath.Join("..", "..", "testdata", "plots", "run", "results.txt"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := judge.NewGrid(judge.GridConfig{Col: "/persist@(off on)"}, results, units)
	if err != nil {
		t.Fatal(err)
	}
	cols := []string{"persist=off", "persist=on"}
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		draw  func(base string) error
		want  []string
		ticks []string
	}{
		{"variants", func(b string) error { return Variants(g, cols, "persist off vs on", b) },
			[]string{"persist off vs on", "barrier-p99-sec (lower is better)", "rows/s (higher is better)", "write-amp (lower is better)"},
			[]string{"ms", "k rows/s", "µs/row"}},
		{"bytes", func(b string) error { return Bytes(g, cols, b) },
			[]string{"lower is better", "wal", "compaction"}, []string{"MB"}},
	} {
		base := filepath.Join(dir, tc.name)
		if err := tc.draw(base); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		b, err := os.ReadFile(base + ".svg")
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, m := range textRE.FindAllStringSubmatch(string(b), -1) {
			texts = append(texts, m[1])
		}
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
