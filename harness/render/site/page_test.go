package site

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/backfill-bench/backfill-bench/harness/trend"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// testPage is a profile page of two charts over eight nights: rows/s that
// steps down by a fifth at night 5 (a worse change point), and a latency in
// microseconds, its first night too short for an interval.
func testPage() Page {
	p := Page{Machine: "m1", Profile: "mem", Index: "index.html"}
	for i := range 8 {
		p.Nights = append(p.Nights, Night{Name: fmt.Sprintf("night%d", i), Commit: fmt.Sprintf("c%d", i),
			CommitTime: fmt.Sprintf("2026-11-%02dT02:00:00Z", i+1), Report: fmt.Sprintf("night%d/nightly.md", i)})
	}
	rows := trend.Series{Cell: "profile=mem/workload=bid", Unit: "steady-rows/s", Better: 1}
	lat := trend.Series{Cell: "profile=mem/workload=bid", Unit: "barrier-p99-sec", Better: -1}
	for i := range 8 {
		v := 500e3 + 3e3*float64(i%3)
		if i >= 5 {
			v *= 0.8
		}
		rows.Points = append(rows.Points, trend.Point{File: i, Median: v, Lo: v * 0.98, Hi: v * 1.02})
		lo, hi := 4.5e-6, 5.5e-6
		if i == 0 {
			lo, hi = math.Inf(-1), math.Inf(1)
		}
		lat.Points = append(lat.Points, trend.Point{File: i, Median: 5e-6, Lo: lo, Hi: hi})
	}
	p.Cells = []Cell{{Name: rows.Cell, Anchor: "bid", Charts: []Chart{
		{Series: rows, ChangePoints: []Change{{Night: 5, Delta: -0.2, Worse: true}}},
		{Series: lat},
	}}}
	return p
}

var tickRE = regexp.MustCompile(`>([^<>]*)</text>`)

// TestPageStructure: each chart is one gonum/plot drawing with its title naming
// the better direction, SI ticks in the metric's unit, the band, one linked
// point per night and the change point; the page matches its golden.
func TestPageStructure(t *testing.T) {
	var buf bytes.Buffer
	if err := WritePage(&buf, testPage()); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	charts := strings.Split(page, `<div class="chart"`)[1:]
	if len(charts) != 2 {
		t.Fatalf("%d charts, want 2", len(charts))
	}
	for i, want := range []struct {
		title, tick string
		changes     int
	}{
		{"steady-rows/s (higher is better)", " k rows/s", 1},
		{"barrier-p99-sec (lower is better)", " µs", 0},
	} {
		c := charts[i][:strings.Index(charts[i], "</svg>")]
		var texts []string
		for _, m := range tickRE.FindAllStringSubmatch(c, -1) {
			texts = append(texts, m[1])
		}
		all := strings.Join(texts, "|")
		if !strings.Contains(all, want.title) {
			t.Errorf("chart %d: no title %q in %s", i, want.title, all)
		}
		ticks := 0
		for _, s := range texts {
			if strings.HasSuffix(s, want.tick) {
				ticks++
			}
			if strings.Contains(s, "e-") || strings.Contains(s, "e+") || strings.Contains(s, "0000") {
				t.Errorf("chart %d: raw number %q on an axis", i, s)
			}
		}
		if ticks < 2 {
			t.Errorf("chart %d: %d ticks in %q, want 2 or more: %s", i, ticks, want.tick, all)
		}
		if !strings.Contains(all, "2026-11-01") {
			t.Errorf("chart %d: the first night is not labelled by its date: %s", i, all)
		}
		if n := strings.Count(c, `<a href="night`); n != 8 {
			t.Errorf("chart %d: %d linked points, want 8", i, n)
		}
		if n := strings.Count(c, `class="change-point worse"`); n != want.changes {
			t.Errorf("chart %d: %d change points, want %d", i, n, want.changes)
		}
		if !strings.Contains(c, bandFill) {
			t.Errorf("chart %d: no band (%s)", i, bandFill)
		}
		if strings.Contains(c, "<?xml") {
			t.Errorf("chart %d: an XML declaration inside the page", i)
		}
	}
	golden := filepath.Join("testdata", "page.golden.html")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if page != string(want) {
		got := filepath.Join("testdata", "page.got.html")
		os.WriteFile(got, buf.Bytes(), 0o644)
		t.Errorf("the page differs from %s: see %s (go test -update rewrites it)", golden, got)
	}
}

// bandFill is how gonum/plot's SVG fills the 95 % band (chart.Translucent(chart.Blue)).
const bandFill = `fill:#0071B1;fill-opacity:0.18824`
