package harness

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
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
// nights' reports, which exist. With --commit-url, each point's tooltip gives its
// night's commit URL and the nights table links each commit; without, neither.
func TestSitePages(t *testing.T) {
	history := writeHistory(t)
	for _, tc := range []struct{ name, commitURL string }{
		{"with --commit-url", "https://example.invalid/commit/%s"},
		{"without", ""},
	} {
		commitURL := tc.commitURL
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			rep, err := Site(SiteConfig{History: history, Out: out, CommitURL: commitURL})
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
				if !strings.Contains(c, `fill-opacity:0.18824`) { // the band, drawn by gonum/plot
					t.Errorf("%s: no confidence band", unit)
				}
				worse := strings.Count(c, `class="change-point worse"`)
				if want := map[string]int{"steady-rows/s": 1, "write-amp": 0}[unit]; worse != want || strings.Contains(c, "change-point better") {
					t.Errorf("%s: %d worse change points, want %d", unit, worse, want)
				}
				// A point: <a href="REPORT"><circle class="point" …><title>NIGHT, commit …</title>.
				for _, p := range pointRE.FindAllStringSubmatch(c, -1) {
					href, night, title := p[1], p[2], p[3]
					if want := "/" + night + "/nightly.md"; !strings.HasSuffix(href, want) {
						t.Errorf("%s: the point of night %s links %s, want its report …%s", unit, night, href, want)
					}
					commit := "c" + night[len(night)-2:] + "00000000"
					if want := "\ncommit: https://example.invalid/commit/" + commit; commitURL != "" && !strings.HasSuffix(title, want) {
						t.Errorf("%s: the point of night %s has the tooltip %q, want its commit URL", unit, night, title)
					} else if commitURL == "" && strings.Contains(title, "https:") {
						t.Errorf("%s: the point of night %s has the tooltip %q, want no URL", unit, night, title)
					}
				}
			}
			if n := len(pointRE.FindAllString(string(page), -1)); n != 4*siteNights {
				t.Errorf("%d points read, want %d", n, 4*siteNights)
			}
			rows := nightRowRE.FindAllStringSubmatch(string(page), -1)
			if len(rows) != siteNights {
				t.Fatalf("%d rows in the nights table, want %d", len(rows), siteNights)
			}
			for _, r := range rows {
				commit, link := r[2], r[1]
				want := ""
				if commitURL != "" {
					want = "https://example.invalid/commit/" + commit
				}
				if link != want {
					t.Errorf("the nights table links commit %s to %q, want %q", commit, link, want)
				}
			}
			for _, href := range strings.Split(string(page), `<a href="`)[1:] {
				href = href[:strings.Index(href, `"`)]
				if strings.HasPrefix(href, "https:") || strings.HasPrefix(href, "index.html") || strings.HasPrefix(href, "#") {
					continue
				}
				if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(href))); err != nil {
					t.Errorf("link %s: %v", href, err)
					break
				}
			}
		})
	}
}

var (
	pointRE    = regexp.MustCompile(`<a href="([^"]*)"><circle class="point"[^>]*><title>(\d{8}T\d{6}Z-c\d\d), commit ([^<]*)</title>`)
	nightRowRE = regexp.MustCompile(`<tr><td><a href="[^"]*">\d{8}T\d{6}Z-c\d\d</a></td><td>(?:<a href="([^"]*)">)?(c\d{10})`)
)

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
