package contract

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/backfill-bench/backfill-bench/contract/rates"
	"github.com/backfill-bench/backfill-bench/contract/scankind"
)

// Dimension is one entry of the dimension table, the one place a matrix
// dimension is declared. From it derive the key of cell names and its place in
// them, ParseName, the flags of benchrun and of the bench binary, Matrix.Set and
// Get, the cells of a matrix, the bench binary's arguments, the dry-run plan, how
// cells are sharded and grouped in the summary, and plot labels.
type Dimension struct {
	Name string // the key in cell names and the flag's name
	Help string // the flags' usage, after "comma-separated "
	// Default is the value of a cell whose name leaves the dimension out: a
	// dimension with a default is named only away from it, so the names of cells
	// from before it existed stay the same. "" for a dimension every name has.
	Default string
	// Parse checks one value (from a flag or a name) and returns the canonical
	// form names carry; its error names the dimension and says what is wanted.
	Parse func(string) (string, error)
	// Paired: cells that differ only in this dimension are a pair, measured
	// side by side: they sit next to each other in a matrix's cells (it varies
	// fastest), land on one shard, and are one summary row with its values as
	// columns (persist's off and on).
	Paired bool
	// Values are a closed dimension's values in order, nil for an open one.
	Values []string

	get       func(Cell) string         // the cell's canonical value
	set       func(*Cell, string) error // from a value Parse accepts
	clear     func(*Cell)               // back to the zero value
	values    func(Matrix) []string     // the matrix's values; nil when unset
	setValues func(*Matrix, []string) error
}

// table is the dimension table in name order; NewDimension is its only writer.
var table = struct {
	sync.RWMutex
	dims []Dimension
}{dims: builtin()}

// Dims returns the dimension table in name order.
func Dims() []Dimension {
	table.RLock()
	defer table.RUnlock()
	return slices.Clone(table.dims)
}

// DimensionNames are the keys of a cell name, in name order: also the flag names,
// taking comma-separated lists, of the benchmark binary and of `benchrun run`.
func DimensionNames() []string {
	var out []string
	for _, d := range Dims() {
		out = append(out, d.Name)
	}
	return out
}

// Dim returns the dimension named name.
func Dim(name string) (Dimension, bool) {
	for _, d := range Dims() {
		if d.Name == name {
			return d, true
		}
	}
	return Dimension{}, false
}

// PairedDimension is the dimension whose values are measured as pairs (persist).
func PairedDimension() Dimension {
	for _, d := range Dims() {
		if d.Paired {
			return d
		}
	}
	return Dimension{}
}

// Projection is the benchproc projection of the dimension, its values in their
// order when closed ("/persist@(off on)"), for grids with its values as columns.
func (d Dimension) Projection() string {
	if len(d.Values) == 0 {
		return "/" + d.Name
	}
	return "/" + d.Name + "@(" + strings.Join(d.Values, " ") + ")"
}

// NewDimension adds an optional dimension to the table, before par, and returns
// the function that removes it. It is how a test (or an experiment) sees a new
// dimension flow through flags, names, plans and shards; a dimension the engine
// reads goes into builtin instead. Its values live in Cell.Value and Matrix.Set.
func NewDimension(d Dimension) (remove func(), err error) {
	if d.Name == "" || strings.ContainsAny(d.Name, "/= ") || d.Parse == nil || d.Default == "" {
		return nil, fmt.Errorf("dimension %q: want a name without '/', '=' or space, a Parse and a Default (old names leave it out)", d.Name)
	}
	if _, err := d.Parse(d.Default); err != nil {
		return nil, fmt.Errorf("dimension %s: default: %w", d.Name, err)
	}
	name := d.Name
	d.get = func(c Cell) string { return cmp.Or(extGet(c.ext, name), d.Default) }
	d.set = func(c *Cell, v string) error {
		v, err := d.Parse(v)
		if err == nil {
			c.ext = extSet(c.ext, name, v)
		}
		return err
	}
	d.clear = func(c *Cell) { c.ext = extSet(c.ext, name, "") }
	d.values = func(m Matrix) []string { return m.ext[name] }
	d.setValues = func(m *Matrix, vals []string) error {
		ext := maps.Clone(m.ext)
		if ext == nil {
			ext = map[string][]string{}
		}
		for i, v := range vals {
			var err error
			if vals[i], err = d.Parse(v); err != nil {
				return err
			}
		}
		ext[name], m.ext = vals, ext
		return nil
	}
	table.Lock()
	defer table.Unlock()
	if slices.ContainsFunc(table.dims, func(o Dimension) bool { return o.Name == name }) {
		return nil, fmt.Errorf("dimension %s: already in the table", name)
	}
	table.dims = slices.Insert(table.dims, len(table.dims)-1, d)
	return func() {
		table.Lock()
		defer table.Unlock()
		table.dims = slices.DeleteFunc(table.dims, func(o Dimension) bool { return o.Name == name })
	}, nil
}

// extGet and extSet read and write the values of dimensions outside Cell's
// fields, kept as "k=v/k=v" sorted by key so that Cell stays comparable.
func extGet(ext, name string) string {
	for _, f := range Fields(ext) {
		if f.Dim == name {
			return f.Value
		}
	}
	return ""
}

func extSet(ext, name, v string) string {
	fs := slices.DeleteFunc(Fields(ext), func(f Field) bool { return f.Dim == name })
	if v != "" {
		fs = append(fs, Field{name, v})
	}
	slices.SortFunc(fs, func(a, b Field) int { return strings.Compare(a.Dim, b.Dim) })
	return JoinFields(fs)
}

// Field is one key=value level of a cell name (or of a baseline's name).
type Field struct{ Dim, Value string }

func (f Field) String() string { return f.Dim + "=" + f.Value }

// Fields splits a name, or a Label, into its key=value levels; a level without
// '=' has an empty Dim.
func Fields(name string) []Field {
	if name == "" {
		return nil
	}
	var out []Field
	for _, p := range strings.Split(name, "/") {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			k, v = "", p
		}
		out = append(out, Field{k, v})
	}
	return out
}

// JoinFields is the name of fields.
func JoinFields(fs []Field) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.String()
	}
	return strings.Join(parts, "/")
}

// FieldOf is the value of dimension dim in a name or Label.
func FieldOf(name, dim string) (string, bool) {
	for _, f := range Fields(name) {
		if f.Dim == dim {
			return f.Value, true
		}
	}
	return "", false
}

// Value is the cell's value of dimension dim as names carry it (its default
// when the cell leaves it zero).
func (c Cell) Value(dim string) string {
	if d, ok := Dim(dim); ok {
		return d.get(c)
	}
	return ""
}

// Field is the cell's name level of dimension dim: "persist=on".
func (c Cell) Field(dim string) Field { return Field{dim, c.Value(dim)} }

// AtDefault reports whether dimension dim has a default and the cell is at it:
// left out of the cell's name and of the bench binary's arguments.
func (c Cell) AtDefault(dim string) bool {
	d, ok := Dim(dim)
	return ok && d.Default != "" && d.get(c) == d.Default
}

// PairKey is the cell with its paired dimensions cleared: the cells of one pair
// (persist off and on) have the same key, for sharding and grouping.
func (c Cell) PairKey() Cell {
	for _, d := range Dims() {
		if d.Paired {
			d.clear(&c)
		}
	}
	return c
}

// Without is the cell's name without the given dimensions: the configuration
// the rest of the name describes.
func (c Cell) Without(dims ...string) string {
	return JoinFields(slices.DeleteFunc(Fields(c.Name()), func(f Field) bool { return slices.Contains(dims, f.Dim) }))
}

// field builds the table entry of a dimension held in a Cell field of type T and
// a Matrix field of type []T; the zero T stands for the default.
func field[T comparable](d Dimension, parse func(string) (T, error), format func(T) string, cf func(*Cell) *T, mf func(*Matrix) *[]T) Dimension {
	d.Parse = func(s string) (string, error) {
		v, err := parse(s)
		if err != nil {
			return "", err
		}
		return format(v), nil
	}
	d.get = func(c Cell) string {
		if v := *cf(&c); v != *new(T) || d.Default == "" {
			return format(v)
		}
		return d.Default
	}
	d.set = func(c *Cell, s string) error {
		v, err := parse(s)
		if err == nil {
			*cf(c) = v
		}
		return err
	}
	d.clear = func(c *Cell) { *cf(c) = *new(T) }
	d.values = func(m Matrix) []string {
		var out []string
		for _, v := range *mf(&m) {
			out = append(out, format(v))
		}
		return out
	}
	d.setValues = func(m *Matrix, vals []string) error {
		var out []T
		for _, s := range vals {
			v, err := parse(s)
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		*mf(m) = out
		return nil
	}
	return d
}

// Parsers and formatters of the built-in dimensions' values.
func plainName(dim string) func(string) (string, error) {
	return func(v string) (string, error) {
		if v == "" || strings.ContainsAny(v, "/= ") {
			return "", fmt.Errorf("%s %q: a %s name has no '/', '=' or space", dim, v, dim)
		}
		return v, nil
	}
}

func oneOf(dim, what string, vals []string) func(string) (string, error) {
	return func(v string) (string, error) {
		if !slices.Contains(vals, v) {
			return "", fmt.Errorf("%s %q: unknown %s (have %s)", dim, v, what, strings.Join(vals, ", "))
		}
		return v, nil
	}
}

func intIn(dim string, lo, hi int, why string) func(string) (int, error) {
	return func(v string) (int, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return 0, fmt.Errorf("%s %q: %s", dim, v, why)
		}
		return n, nil
	}
}

func same[T any](v T) T { return v }

// builtin is the table of the dimensions the engine reads, in name order: the
// dimensions every name has first, then those with defaults, then par.
func builtin() []Dimension {
	str := func(d Dimension, parse func(string) (string, error), cf func(*Cell) *string, mf func(*Matrix) *[]string) Dimension {
		return field(d, parse, same[string], cf, mf)
	}
	itoa := strconv.Itoa
	return []Dimension{
		str(Dimension{Name: "profile", Help: "hardware profiles (see `benchrun profiles`)"},
			plainName("profile"), func(c *Cell) *string { return &c.Profile }, func(m *Matrix) *[]string { return &m.Profiles }),
		str(Dimension{Name: "workload", Help: "workload specs table[+keys][+mix] (see `benchrun workloads`)"},
			plainName("workload"), func(c *Cell) *string { return &c.Workload }, func(m *Matrix) *[]string { return &m.Workloads }),
		field(Dimension{Name: "rows", Help: "initial rows of the upstream table"},
			func(v string) (int64, error) {
				n, err := strconv.ParseInt(strings.ReplaceAll(v, "_", ""), 10, 64)
				if err != nil || n < 0 {
					return 0, fmt.Errorf("rows %q: want a row count ≥ 0", v)
				}
				return n, nil
			}, func(n int64) string { return strconv.FormatInt(n, 10) },
			func(c *Cell) *int64 { return &c.Rows }, func(m *Matrix) *[]int64 { return &m.Rows }),
		field(Dimension{Name: "persist", Help: "persist backfill state: on, off or both", Paired: true, Values: []string{"off", "on"}},
			func(v string) (bool, error) {
				if v != "on" && v != "off" {
					return false, fmt.Errorf("persist %q: want on, off or on,off", v)
				}
				return v == "on", nil
			}, OnOff, func(c *Cell) *bool { return &c.Persist }, func(m *Matrix) *[]bool { return &m.Persist }),
		str(Dimension{Name: "scan", Values: Scans, Help: scankind.Help("snapshot")},
			oneOf("scan", "scan", Scans), func(c *Cell) *string { return &c.Scan }, func(m *Matrix) *[]string { return &m.Scans }),
		field(Dimension{Name: "barrier", Help: "barriers: intervals (100ms, time-driven, as a real system) or snapshot rows per epoch (50krows, work-driven: every run does identical work)"},
			rates.ParseCadence, rates.Cadence.String, func(c *Cell) *rates.Cadence { return &c.Barrier }, func(m *Matrix) *[]rates.Cadence { return &m.Barriers }),
		field(Dimension{Name: "changes", Default: "default", Help: "upstream changes: per second (10k/s) or per epoch (500/epoch); default: 10k/s, or 1% of the barrier's rows per epoch"},
			rates.ParseChangeRate, rates.ChangeRate.String, func(c *Cell) *rates.ChangeRate { return &c.Changes }, func(m *Matrix) *[]rates.ChangeRate { return &m.Changes }),
		field(Dimension{Name: "limit", Default: "none", Help: "snapshot rate limits, rows/s per actor (200k/s), or none, or a step mid-job at a per cent of the rows or a time (200k/s..50k/s@50%, 0/s..100k/s@2s; 0/s pauses, as in the engine); one bucket per actor, kept across the scan's reopens"},
			rates.ParseRateLimit, rates.RateLimit.String, func(c *Cell) *rates.RateLimit { return &c.Limit }, func(m *Matrix) *[]rates.RateLimit { return &m.Limits }),
		str(Dimension{Name: "read", Default: Reads[0], Values: Reads, Help: "read modes of the scan after a barrier: uncommitted (the sealed epoch, without waiting for its commit; the default) or checkpoint (the last checkpoint and the changes buffered since)"},
			oneOf("read", "read mode", Reads), func(c *Cell) *string { return &c.Read }, func(m *Matrix) *[]string { return &m.Reads }),
		field(Dimension{Name: "ckpt", Default: "1", Help: "checkpoint frequencies: every n-th barrier syncs (1: every one, the default; the seed's era used 10)"},
			intIn("ckpt", 1, math.MaxInt, "want a checkpoint frequency ≥ 1 (every n-th barrier syncs)"), itoa,
			func(c *Cell) *int { return &c.Ckpt }, func(m *Matrix) *[]int { return &m.Ckpts }),
		field(Dimension{Name: "vnodes", Default: itoa(DefaultVnodes), Help: "vnode counts (the default 256 is the engine's); cells with more actors (par) than vnodes are skipped, saying so"},
			intIn("vnodes", 1, MaxVnodes, fmt.Sprintf("want a vnode count from 1 to %d", MaxVnodes)), itoa,
			func(c *Cell) *int { return &c.Vnodes }, func(m *Matrix) *[]int { return &m.Vnodes }),
		field(Dimension{Name: "chunk", Default: itoa(DefaultChunk), Help: "snapshot chunk sizes in rows (the default 256 is the engine's stream_chunk_size; 1024 was the seed era's)"},
			intIn("chunk", 2, MaxChunk, fmt.Sprintf("want a snapshot chunk size from 2 to %d rows (the engine's default is %d)", MaxChunk, DefaultChunk)), itoa,
			func(c *Cell) *int { return &c.Chunk }, func(m *Matrix) *[]int { return &m.Chunks }),
		field(Dimension{Name: "par", Help: "backfill actors"},
			intIn("par", 1, MaxPar, fmt.Sprintf("want an actor count from 1 to %d (each actor owns at least one of the %d vnodes)", MaxPar, MaxPar)), itoa,
			func(c *Cell) *int { return &c.Par }, func(m *Matrix) *[]int { return &m.Pars }),
	}
}
