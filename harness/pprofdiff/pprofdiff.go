// Package pprofdiff compares two profiles of one job: the functions whose CPU time
// (or allocated bytes) grew from base to head, flat and cumulative, within the
// job's pprof label.
package pprofdiff

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// Func is one function's share in both profiles, in the diff's unit.
type Func struct {
	Name  string  `json:"name"`
	Base  float64 `json:"base"`
	Head  float64 `json:"head"`
	Delta float64 `json:"delta"`
}

// Diff is what grew: the functions with the most added CPU time (or allocated
// bytes), by their own (flat) share and with everything they called (cumulative),
// and each profile's total within the label.
type Diff struct {
	Unit      string  `json:"unit"` // "seconds" of CPU or "bytes" allocated
	BaseTotal float64 `json:"base_total"`
	HeadTotal float64 `json:"head_total"`
	Flat      []Func  `json:"flat"`
	Cum       []Func  `json:"cum"`
}

// Kinds of profile Compare reads: which sample type it sums.
const (
	CPU   = "cpu"         // a CPU profile, in seconds
	Alloc = "alloc_space" // a heap profile's allocated bytes
)

// Compare reads a base and a head profile of kind (CPU or Alloc) and returns the
// top functions by added time or bytes, counting only samples whose label key has
// the value (key "": every sample; heap profiles carry no labels).
func Compare(base, head io.Reader, kind, key, value string, top int) (*Diff, error) {
	var sides [2]times
	for i, r := range []io.Reader{base, head} {
		p, err := profile.Parse(r)
		if err != nil {
			return nil, fmt.Errorf("pprofdiff: %s profile: %w", []string{"base", "head"}[i], err)
		}
		if sides[i], err = sums(p, kind, key, value); err != nil {
			return nil, fmt.Errorf("pprofdiff: %s profile: %w", []string{"base", "head"}[i], err)
		}
	}
	unit := "seconds"
	if kind == Alloc {
		unit = "bytes"
	}
	return &Diff{
		Unit: unit, BaseTotal: sides[0].total, HeadTotal: sides[1].total,
		Flat: grown(sides[0].flat, sides[1].flat, top), Cum: grown(sides[0].cum, sides[1].cum, top),
	}, nil
}

// times are seconds of CPU (or bytes) per function.
type times struct {
	flat, cum map[string]float64
	total     float64
}

// sums adds up the matching samples of kind: flat to the function of the innermost
// frame, cumulative once to every function on the stack.
func sums(p *profile.Profile, kind, key, value string) (times, error) {
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == kind {
			idx = i
		}
	}
	if idx < 0 {
		return times{}, fmt.Errorf("no %s samples: want a CPU profile for %q, a heap profile for %q", kind, CPU, Alloc)
	}
	scale := 1.0
	if kind == CPU {
		scale = 1e-9 // nanoseconds
	}
	t := times{flat: map[string]float64{}, cum: map[string]float64{}}
	for _, s := range p.Sample {
		if key != "" && !slices.Contains(s.Label[key], value) {
			continue
		}
		v := float64(s.Value[idx]) * scale
		t.total += v
		seen := map[string]bool{}
		for li, loc := range s.Location {
			for ln, line := range loc.Line {
				if line.Function == nil {
					continue
				}
				name := shortName(line.Function.Name)
				if li == 0 && ln == 0 {
					t.flat[name] += v
				}
				if !seen[name] {
					seen[name] = true
					t.cum[name] += v
				}
			}
		}
	}
	return t, nil
}

// shortName writes a generic function's compiler shapes, its type arguments as
// "[go.shape.…,…]" hundreds of characters long, as "[…]"; its instantiations then
// count as one function, as a reader thinks of it.
func shortName(name string) string {
	var b strings.Builder
	for {
		open := strings.Index(name, "[go.shape.")
		if open < 0 {
			return b.String() + name
		}
		depth, end := 0, -1
		for i := open; i < len(name) && end < 0; i++ {
			switch name[i] {
			case '[':
				depth++
			case ']':
				if depth--; depth == 0 {
					end = i
				}
			}
		}
		if end < 0 {
			return b.String() + name // unbalanced: leave it as it is
		}
		b.WriteString(name[:open] + "[…]")
		name = name[end+1:]
	}
}

// grown returns the top functions by added time, most first; none that shrank.
func grown(base, head map[string]float64, top int) []Func {
	var out []Func
	for name, h := range head {
		if d := h - base[name]; d > 0 {
			out = append(out, Func{Name: name, Base: base[name], Head: h, Delta: d})
		}
	}
	slices.SortFunc(out, func(a, b Func) int {
		if c := cmp.Compare(b.Delta, a.Delta); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return out[:min(top, len(out))]
}
