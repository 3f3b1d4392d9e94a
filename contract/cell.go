package contract

import (
	"fmt"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/contract/rates"
)

// BenchmarkName is the base name of the backfill benchmark; its sub-benchmarks are
// the cells.
const BenchmarkName = "Backfill"

// Cell is one benchmark configuration. Its Name is the sub-benchmark name, the
// contract that lets results of any two commits be compared.
type Cell struct {
	Profile  string
	Workload string
	Rows     int64
	Persist  bool
	Scan     string // a scankind.Kinds name
	Barrier  rates.Cadence
	Changes  rates.ChangeRate // left out of the name when the default
	Limit    rates.RateLimit  // left out of the name when none
	Read     string           // read mode; "" or the default (left out of the name) is Reads[0]
	Ckpt     int              // checkpoint frequency: every n-th barrier syncs; 0 or 1 (left out of the name) is every one
	Vnodes   int              // vnode count; 0 or DefaultVnodes (left out of the name) is DefaultVnodes
	Chunk    int              // snapshot chunk size in rows; 0 or DefaultChunk (left out of the name) is DefaultChunk
	Par      int
	ext      string // the values of dimensions added by NewDimension (see extSet)
}

// ReadMode is the read mode, Reads[0] for the zero value.
func (c Cell) ReadMode() string {
	if c.Read == "" {
		return Reads[0]
	}
	return c.Read
}

// VnodeCount is the vnode count, DefaultVnodes for the zero value.
func (c Cell) VnodeCount() int {
	if c.Vnodes == 0 {
		return DefaultVnodes
	}
	return c.Vnodes
}

// ChunkSize is the snapshot chunk size, DefaultChunk for the zero value.
func (c Cell) ChunkSize() int {
	if c.Chunk == 0 {
		return DefaultChunk
	}
	return c.Chunk
}

// Checkpoint is the checkpoint frequency, 1 for the zero value.
func (c Cell) Checkpoint() int { return max(c.Ckpt, 1) }

// OnOff renders a bool as the on|off used in names.
func OnOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// Name returns "profile=…/workload=…/rows=…/persist=…/scan=…/barrier=…/par=…":
// the dimensions in table order, those at their default left out (changes=…,
// limit=…, read=…, ckpt=…, vnodes=… and chunk=… before par otherwise), so names
// of cells that existed before a dimension did stay the same.
func (c Cell) Name() string { return c.name("") }

// RecoveryName is BenchmarkRecovery's sub-benchmark name for the cell with its
// power cut at crash (like "25%"): the cell's Name with crash=… after rows=, so it
// carries every dimension the cell's name does and, at the defaults, stays the
// name recoveries had before the optional dimensions.
func (c Cell) RecoveryName(crash string) string { return c.name("/crash=" + crash) }

// name is Name with afterRows put after rows=….
func (c Cell) name(afterRows string) string {
	var b strings.Builder
	for _, d := range Dims() {
		if d.Default != "" && d.get(c) == d.Default {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('/')
		}
		b.WriteString(d.Name + "=" + d.get(c))
		if d.Name == "rows" {
			b.WriteString(afterRows)
		}
	}
	return b.String()
}

// FullName is the cell's benchmark name without the GOMAXPROCS suffix:
// "Backfill/profile=…/par=2".
func (c Cell) FullName() string { return BenchmarkName + "/" + c.Name() }

// ParseName parses a Name back into a Cell: every dimension without a default
// must be there, each at most once; the others left out are at their defaults.
func ParseName(name string) (Cell, error) {
	var c Cell
	seen := map[string]bool{}
	for _, f := range Fields(name) {
		if f.Dim == "" {
			return c, fmt.Errorf("cell name %q: %q is not key=value", name, f.Value)
		}
		if seen[f.Dim] {
			return c, fmt.Errorf("cell name %q: key %s repeated", name, f.Dim)
		}
		seen[f.Dim] = true
		d, ok := Dim(f.Dim)
		if !ok {
			return c, fmt.Errorf("cell name %q: unknown key %s", name, f.Dim)
		}
		if err := d.set(&c, f.Value); err != nil {
			return c, fmt.Errorf("cell name %q: %w", name, err)
		}
	}
	for _, d := range Dims() {
		switch {
		case seen[d.Name]:
		case d.Default == "":
			return c, fmt.Errorf("cell name %q: missing %s=", name, d.Name)
		default: // as Matrix.Cells makes them when left out
			if err := d.set(&c, d.Default); err != nil {
				return c, err
			}
		}
	}
	return c, nil
}

// CellOf returns the cell of a BenchmarkBackfill result.
func CellOf(r *benchfmt.Result) (Cell, bool) {
	base, name := subName(r)
	if base != BenchmarkName {
		return Cell{}, false
	}
	c, err := ParseName(name)
	return c, err == nil
}

// BaselineCell returns the benchmark of a baseline's result (one of Baselines)
// and the dimensions its sub-benchmark name carries, as a Cell: all of them for a
// replay, some for the others (the rest left zero).
func BaselineCell(r *benchfmt.Result) (base string, c Cell, ok bool) {
	base, name := subName(r)
	if !slices.ContainsFunc(Baselines, func(b struct{ Benchmark, Label string }) bool { return b.Benchmark == base }) {
		return base, c, false
	}
	for _, f := range Fields(name) {
		d, ok := Dim(f.Dim)
		if !ok || d.set(&c, f.Value) != nil {
			return base, c, false
		}
	}
	return base, c, true
}

// subName splits a result's name into its benchmark and its sub-benchmark name,
// without the GOMAXPROCS suffix.
func subName(r *benchfmt.Result) (base, name string) {
	b, parts := r.Name.Parts()
	var levels []string
	for _, p := range parts {
		if s := string(p); strings.HasPrefix(s, "/") {
			levels = append(levels, s[1:])
		}
	}
	return string(b), strings.Join(levels, "/")
}

// Label is how tables and plots show a benchmark's full name: without the
// "Backfill/" prefix and without the GOMAXPROCS suffix, which the profile (in the
// name) and the gomaxprocs config line already say.
func Label(fullName string) string {
	base, parts := benchfmt.Name(fullName).Parts()
	var b strings.Builder
	if string(base) != BenchmarkName {
		b.Write(base)
	}
	for _, p := range parts {
		if p[0] == '-' {
			continue // the GOMAXPROCS suffix
		}
		b.Write(p)
	}
	return strings.TrimPrefix(b.String(), "/")
}
