package harness

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// siteNights is the number of nights writeHistory records; its throughput steps down
// 10 % from night siteStep on, a change point.
const siteNights, siteStep = 12, 8

// writeHistory records a synthetic nightly history of one machine: two cells on one
// profile, six samples a night of steady-rows/s and write-amp.
func writeHistory(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	rng := rand.New(rand.NewPCG(4, 2))
	for i := range siteNights {
		dir := filepath.Join(root, "fp1", fmt.Sprintf("202611%02dT020000Z-c%02d", i+1, i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Unit steady-rows/s better=higher\nUnit write-amp better=lower\ncommit: c%02d00000000\ncommit-time: 2026-11-%02dT01:00:00Z\nmachine: fp1\n", i, i+1)
		level := 100.0
		if i >= siteStep {
			level = 90
		}
		for _, w := range []string{"narrow", "bid"} {
			for range 6 { // 6: the fewest runs with a 95 % interval of the median
				fmt.Fprintf(&b, "BenchmarkBackfill/profile=mem/workload=%s/rows=1/persist=on/scan=merged/barrier=100rows/par=2-2 1 %.1f steady-rows/s %.3f write-amp\n",
					w, level*(1+0.005*rng.NormFloat64()), 1.2*(1+0.005*rng.NormFloat64()))
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "results.txt"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "nightly.md"), []byte("# night\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestSitePages: the site has an index and one page for the profile; every chart has
// a point per night and its band; the step in steady-rows/s is marked as a worse
// change point, and write-amp, which did not move, has none; points link to the
// nights' reports, which exist.
func TestSitePages(t *testing.T) {
	out := t.TempDir()
	rep, err := Site(SiteConfig{History: writeHistory(t), Out: out, CommitURL: "https://example.invalid/commit/%s"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Pages) != 2 || filepath.Base(rep.Pages[0]) != "index.html" {
		t.Fatalf("pages %v, want index.html and one profile page", rep.Pages)
	}
	index, err := os.ReadFile(rep.Pages[0])
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(rep.Pages[1])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(index), filepath.Base(rep.Pages[1])) || !strings.Contains(string(index), "workload=bid") {
		t.Errorf("the index does not link the page and its cells:\n%s", index)
	}
	charts := strings.Split(string(page), `<div class="chart"`)[1:]
	if len(charts) != 4 {
		t.Fatalf("%d charts, want 4 (2 cells × 2 metrics)", len(charts))
	}
	for _, c := range charts {
		unit := c[strings.Index(c, `data-unit="`)+11:]
		unit = unit[:strings.Index(unit, `"`)]
		if n := strings.Count(c, `class="point"`); n != siteNights {
			t.Errorf("%s: %d points, want one per night (%d)", unit, n, siteNights)
		}
		if !strings.Contains(c, `class="ci"`) {
			t.Errorf("%s: no confidence band", unit)
		}
		worse := strings.Count(c, `class="change-point worse"`)
		if want := map[string]int{"steady-rows/s": 1, "write-amp": 0}[unit]; worse != want || strings.Contains(c, "change-point better") {
			t.Errorf("%s: %d worse change points, want %d", unit, worse, want)
		}
	}
	if !strings.Contains(string(page), "https://example.invalid/commit/c0300000000") {
		t.Error("no commit link")
	}
	for _, href := range strings.Split(string(page), `<a href="`)[1:] {
		href = href[:strings.Index(href, `"`)]
		if strings.HasPrefix(href, "https:") || strings.HasPrefix(href, "index.html") {
			continue
		}
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(href))); err != nil {
			t.Errorf("link %s: %v", href, err)
			break
		}
	}
}

func TestSiteBadInput(t *testing.T) {
	for _, cfg := range []SiteConfig{
		{History: t.TempDir()},
		{History: filepath.Join(t.TempDir(), "missing"), Out: t.TempDir()},
		{History: t.TempDir(), Out: t.TempDir(), CommitURL: "https://example.invalid/commit/"},
	} {
		if _, err := Site(cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}
