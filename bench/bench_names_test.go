package bench_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/bench"
	"github.com/backfill-bench/backfill-bench/bench/pipeline"
)

// trickyMatrix has values with the characters names may hold: '+', ':', '.', '-'.
func trickyMatrix(t *testing.T) bench.Matrix {
	var m bench.Matrix
	for d, v := range map[string]string{
		"profile": "mem,slow-disk", "workload": "bid+zipfian:1.2+update-heavy,narrow+hot-range", "rows": "0,200000",
		"persist": "off,on", "scan": "merged", "barrier": "100ms,1m30s", "par": "1,16",
	} {
		if err := m.Set(d, v); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func TestCellNameRoundTrip(t *testing.T) {
	cells := trickyMatrix(t).Cells()
	if len(cells) != 64 {
		t.Fatalf("%d cells, want 64", len(cells))
	}
	for _, c := range cells {
		name := c.Name()
		got, err := bench.ParseName(name)
		if err != nil {
			t.Fatal(err)
		}
		if got != c {
			t.Errorf("ParseName(%q) = %+v, want %+v", name, got, c)
		}
		// benchfmt sees the same keys in the full benchmark name.
		line := fmt.Sprintf("BenchmarkBackfill/%s-2 1 100 ns/op\n", name)
		r := benchfmt.NewReader(strings.NewReader(line), "x")
		if !r.Scan() {
			t.Fatalf("benchfmt read nothing: %v", r.Err())
		}
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			t.Fatalf("benchfmt: %v", r.Result())
		}
		base, parts := res.Name.Parts()
		if string(base) != "Backfill" {
			t.Errorf("base name %q", base)
		}
		keys := map[string]string{}
		for _, p := range parts {
			k, v, _ := strings.Cut(strings.TrimPrefix(string(p), "/"), "=")
			keys[k] = v
		}
		only := c.Only()
		for _, d := range bench.Dimensions {
			if keys[d] != only.Get(d) {
				t.Errorf("%s: benchfmt key %s=%q, want %q", name, d, keys[d], only.Get(d))
			}
		}
	}
}

// TestBenchRegexpSelectsOneCell checks the -test.bench pattern the harness passes
// against every cell name, level by level as the testing package matches it.
func TestBenchRegexpSelectsOneCell(t *testing.T) {
	cells := trickyMatrix(t).Cells()
	for _, c := range cells {
		levels := strings.Split(c.BenchRegexp(), "/")
		for _, other := range cells {
			names := append([]string{"BenchmarkBackfill"}, strings.Split(other.Name(), "/")...)
			match := len(levels) == len(names)
			for i := 0; match && i < len(levels); i++ {
				match = regexp.MustCompile(levels[i]).MatchString(names[i])
			}
			if match != (c == other) {
				t.Errorf("pattern of %s matches %s: %v", c.Name(), other.Name(), match)
			}
		}
	}
}

func TestMatrixSetErrors(t *testing.T) {
	for _, tc := range [][2]string{
		{"rows", "-1"}, {"rows", "many"}, {"persist", "yes"}, {"scan", "sideways"}, {"barrier", "0s"},
		{"barrier", "soon"}, {"par", "0"}, {"workload", "nope"}, {"profile", "a/b"}, {"color", "red"}, {"par", " , "},
	} {
		var m bench.Matrix
		if err := m.Set(tc[0], tc[1]); err == nil {
			t.Errorf("Set(%s, %q): no error", tc[0], tc[1])
		}
	}
}

func TestParseNameErrors(t *testing.T) {
	good := bench.Cell{Profile: "mem", Workload: "narrow", Rows: 1, Scan: "merged", Barrier: time.Second, Par: 1}.Name()
	for _, name := range []string{
		"", "profile=mem", strings.Replace(good, "persist=off", "persist=maybe", 1),
		strings.Replace(good, "rows=1", "rows=x", 1), good + "/color=red", good + "/par=2", "junk/" + good,
	} {
		if _, err := bench.ParseName(name); err == nil {
			t.Errorf("ParseName(%q): no error", name)
		}
	}
}

// TestOutputParses writes the unit lines and a result line as the benchmark does and
// reads them back with benchfmt: every unit parses and keeps its direction.
func TestOutputParses(t *testing.T) {
	var buf bytes.Buffer
	if err := bench.WriteUnits(&buf); err != nil {
		t.Fatal(err)
	}
	res := &pipeline.Result{Wall: time.Second, SnapshotRows: 100, CPU: time.Millisecond}
	res.Epochs = []pipeline.EpochTrace{{Latency: time.Millisecond}}
	w := benchfmt.NewWriter(&buf)
	out := &benchfmt.Result{Name: benchfmt.Name("BenchmarkBackfill/" + bench.Cell{Profile: "mem", Workload: "narrow", Scan: "merged", Barrier: time.Second, Par: 1}.Name()), Iters: 1}
	for _, m := range bench.Metrics(res) {
		out.Values = append(out.Values, benchfmt.Value{Value: m.Value, Unit: m.Unit})
	}
	if err := w.Write(out); err != nil {
		t.Fatal(err)
	}
	r := benchfmt.NewReader(&buf, "out.txt")
	var got *benchfmt.Result
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Errorf("syntax error: %v", rec)
		case *benchfmt.Result:
			got = rec.Clone()
		}
	}
	if got == nil {
		t.Fatal("no result read back")
	}
	units := r.Units()
	for _, v := range got.Values {
		if v.OrigUnit == "ns/op" || v.Unit == "sec/op" {
			continue
		}
		if units.GetBetter(v.Unit) == 0 {
			t.Errorf("unit %s has no better= direction", v.Unit)
		}
	}
	if len(got.Values) != len(bench.Metrics(res)) {
		t.Errorf("read %d values, wrote %d", len(got.Values), len(bench.Metrics(res)))
	}
	if units.GetBetter("rows/s") != 1 || units.GetBetter("write-amp") != -1 {
		t.Error("rows/s should be better higher and write-amp better lower")
	}
}
