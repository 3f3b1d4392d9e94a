// Package chart is the one plotting stack of the reports and the site: gonum/plot
// with SI-formatted ticks, the palette, and PNG/SVG output.
package chart

import (
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
)

// prefixes are the SI prefixes Format uses, from 10⁻¹² to 10¹².
var prefixes = []string{"p", "n", "µ", "m", "", "k", "M", "G", "T"}

// Format writes v in unit with an SI prefix and three significant digits:
// Format(5e5, "rows/s") = "500 k rows/s", Format(5e-6, "s") = "5 µs",
// Format(1.2e6, "B") = "1.2 MB". Seconds take no prefix above 1 (90 s, not 0.09 ks),
// other units none below 1 (0.25 %, 0.8).
func Format(v float64, unit string) string { return format(v, unit, 3) }

// format is Format with digits significant digits.
func format(v float64, unit string, digits int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strings.TrimSpace(strconv.FormatFloat(v, 'g', -1, 64) + " " + unit)
	}
	exp := 0
	if a := math.Abs(v); a != 0 {
		exp = int(math.Floor(math.Log10(a)/3)) * 3
		// Rounding can carry into the next prefix: 999.96 k → 1 M.
		if m, _ := strconv.ParseFloat(strconv.FormatFloat(a/math.Pow(10, float64(exp)), 'g', digits, 64), 64); m >= 1000 {
			exp += 3
		}
	}
	exp = max(-12, min(12, exp))
	// Seconds take milli and below, not kilo; other units the reverse: 0.8, not
	// 800 m (a reader takes m for metres).
	if (exp > 0 && isSeconds(unit)) || (exp < 0 && !isSeconds(unit)) {
		exp = 0
	}
	m := v / math.Pow(10, float64(exp))
	s := strconv.FormatFloat(m, 'f', -1, 64)
	if r := strconv.FormatFloat(m, 'g', digits, 64); !strings.ContainsAny(r, "e") {
		s = r
	} else if math.Abs(m) >= 1 {
		s = strconv.FormatFloat(math.Round(m), 'f', 0, 64)
	}
	if s == "-0" {
		s = "0"
	}
	// A prefix joins a symbol (ms, MB) and stands apart from a word (500 k rows/s).
	head, _, _ := strings.Cut(unit, "/")
	suffix := prefixes[exp/3+4] + unit
	if head != "s" && head != "B" && prefixes[exp/3+4] != "" && unit != "" {
		suffix = prefixes[exp/3+4] + " " + unit
	}
	if suffix == "" {
		return s
	}
	return s + " " + suffix
}

func isSeconds(unit string) bool { return unit == "s" || strings.HasPrefix(unit, "s/") }

// AxisUnit splits a benchmark metric into the factor that brings its values to
// a base unit and that unit, as ticks print it: "steady-cpu-ns/row" → 1e-9, "s/row";
// "barrier-p99-sec" → 1, "s"; "steady-rows/s" → 1, "rows/s"; ratios such as
// "write-amp" → 1, "".
func AxisUnit(metric string) (scale float64, unit string) {
	f := metric
	if i := strings.LastIndex(metric, "-"); i >= 0 {
		f = metric[i+1:]
	}
	head, tail, per := strings.Cut(f, "/")
	if per {
		tail = "/" + tail
	}
	switch head {
	case "sec":
		return 1, "s" + tail
	case "ns":
		return 1e-9, "s" + tail
	case "amp", "bytes", "ratio":
		return 1, ""
	}
	return 1, f
}

// Ticks is a gonum Ticker that labels an axis of a metric's values with SI
// prefixes and the metric's unit ("500 k rows/s"), with as many digits as keep
// neighbouring labels apart. Log marks powers of ten on a log axis, or a linear
// axis's ticks when the range holds fewer than two of them.
type Ticks struct {
	Scale float64 // multiplies a value into Unit; 0 means 1
	Unit  string
	Log   bool
}

// MetricTicks is the Ticker of a metric's axis (see AxisUnit).
func MetricTicks(metric string, log bool) Ticks {
	s, u := AxisUnit(metric)
	return Ticks{Scale: s, Unit: u, Log: log}
}

// Ticks implements plot.Ticker.
func (t Ticks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	if t.Log {
		ticks = plot.LogTicks{Prec: -1}.Ticks(min, max)
		labelled := 0
		for _, tk := range ticks {
			if tk.Label != "" && tk.Value >= min && tk.Value <= max {
				labelled++
			}
		}
		if labelled < 2 {
			ticks = plot.DefaultTicks{}.Ticks(min, max)
		}
	} else {
		ticks = plot.DefaultTicks{}.Ticks(min, max)
	}
	scale := t.Scale
	if scale == 0 {
		scale = 1
	}
	for digits := 3; digits <= 8; digits++ {
		seen := map[string]bool{}
		distinct := true
		for i, tk := range ticks {
			if tk.Label == "" {
				continue
			}
			ticks[i].Label = format(tk.Value*scale, t.Unit, digits)
			distinct = distinct && !seen[ticks[i].Label]
			seen[ticks[i].Label] = true
		}
		if distinct {
			break
		}
	}
	return ticks
}
