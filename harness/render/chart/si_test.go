package chart

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		unit string
		want string
	}{
		{5e5, "rows/s", "500 k rows/s"},
		{5e-6, "s", "5 µs"},
		{2.5e-6, "s", "2.5 µs"},
		{1.2e6, "B", "1.2 MB"},
		{0, "s", "0 s"},
		{90, "s", "90 s"},
		{1234, "s", "1234 s"},
		{-0.0015, "s", "-1.5 ms"},
		{1.5, "", "1.5"},
		{0.8, "", "0.8"},
		{0.0125, "%", "0.0125 %"},
		{2e-7, "B", "0.0000002 B"},
		{999960, "B", "1 MB"},
		{1e15, "B", "1000 TB"},
		{3e-15, "s", "0.003 ps"},
		{-2.5e-6, "rows/s", "-0.0000025 rows/s"},
		{math.Inf(1), "s", "+Inf s"},
	} {
		if got := Format(tc.v, tc.unit); got != tc.want {
			t.Errorf("Format(%g, %q) = %q, want %q", tc.v, tc.unit, got, tc.want)
		}
	}
}

func TestAxisUnit(t *testing.T) {
	for _, tc := range []struct {
		metric, unit string
		scale        float64
	}{
		{"steady-rows/s", "rows/s", 1},
		{"steady-cpu-ns/row", "s/row", 1e-9},
		{"barrier-p99-sec", "s", 1},
		{"sec/op", "s/op", 1},
		{"write-amp", "", 1},
		{"persist-B/op", "B/op", 1},
		{"state/mv-bytes", "", 1},
	} {
		if s, u := AxisUnit(tc.metric); s != tc.scale || u != tc.unit {
			t.Errorf("AxisUnit(%q) = %g, %q; want %g, %q", tc.metric, s, u, tc.scale, tc.unit)
		}
	}
}

func TestTicksLabelsDistinct(t *testing.T) {
	for _, tc := range []struct {
		min, max float64
		log      bool
	}{{0, 1e6, false}, {1.02e6, 1.03e6, false}, {1e-6, 3e-3, true}, {0.9, 1.1, true}} {
		ticks := Ticks{Unit: "rows/s", Log: tc.log}.Ticks(tc.min, tc.max)
		seen := map[string]bool{}
		for _, tk := range ticks {
			if tk.Label == "" {
				continue
			}
			if seen[tk.Label] || !strings.HasSuffix(tk.Label, "rows/s") {
				t.Errorf("[%g, %g]: label %q repeated or without the unit: %v", tc.min, tc.max, tk.Label, ticks)
			}
			seen[tk.Label] = true
		}
		if len(seen) < 2 {
			t.Errorf("[%g, %g]: %d labels, want 2 or more", tc.min, tc.max, len(seen))
		}
	}
}

// parse reads Format's output back: the number times its prefix.
func parse(s, unit string) (float64, bool) {
	num, rest, _ := strings.Cut(s, " ")
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, false
	}
	rest = strings.TrimSpace(strings.TrimSuffix(rest, unit))
	for i, p := range prefixes {
		if rest == p {
			return v * math.Pow(10, float64(3*(i-4))), true
		}
	}
	return 0, false
}

// FuzzFormat: the label reads back within three significant digits, ends in the
// unit, and its number is below 1000 unless no larger prefix is left (or the unit
// is seconds).
func FuzzFormat(f *testing.F) {
	for _, v := range []float64{0, 5e5, 5e-6, 1.2e6, 999.96e3, -42, 1e300, 1e-300, 90} {
		f.Add(v, "rows/s")
		f.Add(v, "s")
	}
	f.Fuzz(func(t *testing.T, v float64, unit string) {
		if math.IsNaN(v) || math.IsInf(v, 0) || strings.ContainsAny(unit, " 0123456789.-+eE") {
			return
		}
		s := Format(v, unit)
		if unit != "" && !strings.HasSuffix(s, unit) {
			t.Fatalf("Format(%g, %q) = %q: no unit", v, unit, s)
		}
		got, ok := parse(s, unit)
		if !ok {
			t.Fatalf("Format(%g, %q) = %q: cannot read it back", v, unit, s)
		}
		if err := math.Abs(got-v) / math.Abs(v); v != 0 && err > 5e-3 {
			t.Fatalf("Format(%g, %q) = %q reads back as %g (error %.2g)", v, unit, s, got, err)
		}
		num, _, _ := strings.Cut(s, " ")
		if m, _ := strconv.ParseFloat(num, 64); math.Abs(m) >= 1000 && !isSeconds(unit) && math.Abs(v) < 1e15 {
			t.Fatalf("Format(%g, %q) = %q: want a larger prefix", v, unit, s)
		}
	})
}
