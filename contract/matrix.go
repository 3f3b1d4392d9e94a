package contract

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/backfill-bench/backfill-bench/contract/rates"
	"github.com/backfill-bench/backfill-bench/contract/scankind"
)

// Scans are the names of the scan strategies the executor implements (ScanKinds);
// the bench package's tests check that the model has exactly these. In RisingWave's
// terms: merged is no-shuffle backfill (deprecated, #25963), per-vnode arrangement
// backfill, snapshot snapshot backfill (the default, #24116).
var Scans = scankind.Names()

// Reads are the read modes of a scan reopened after a barrier (DESIGN §2.3); the
// first is the default, left out of cell names.
var Reads = []string{"uncommitted", "checkpoint"}

// MaxPar is the most actors a job can have: the vnode count, each actor owning at
// least one vnode (the bench package's tests check it against the storage layer).
const MaxPar = 256

// DefaultVnodes is the vnode count of a cell that does not name one (the engine's;
// the bench package's tests check it against the storage layer).
const DefaultVnodes = 256

// MaxVnodes is the most vnodes a job can have.
const MaxVnodes = 1 << 16

// DefaultChunk is the snapshot chunk size of a cell that does not name one: the
// engine's stream_chunk_size (RisingWave src/common/src/config/mod.rs, 256 rows;
// 1024 in the seed's era).
const DefaultChunk = 256

// MaxChunk is the largest chunk size a cell may have.
const MaxChunk = 1 << 20

// Matrix is a value list per dimension; its cells are the cross product.
type Matrix struct {
	Profiles  []string
	Workloads []string // canonical workload specs (see Canonicalize)
	Rows      []int64
	Persist   []bool
	Scans     []string
	Barriers  []rates.Cadence
	Changes   []rates.ChangeRate // empty: the default only
	Limits    []rates.RateLimit  // empty: none only
	Reads     []string           // read modes; empty: the default only
	Ckpts     []int              // checkpoint frequencies; empty: 1 only
	Vnodes    []int              // vnode counts; empty: DefaultVnodes only
	Chunks    []int              // snapshot chunk sizes; empty: DefaultChunk only
	Pars      []int
	ext       map[string][]string // dimensions added by NewDimension
}

// Set parses a comma-separated list of values for one dimension, replacing its values.
// Duplicates are dropped; values keep the order given. Workloads are only checked to
// fit in a name here: Canonicalize checks them against the workload catalog.
func (m *Matrix) Set(dim, list string) error {
	var vals []string
	for _, v := range strings.Split(list, ",") {
		if v = strings.TrimSpace(v); v != "" && !slices.Contains(vals, v) {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return fmt.Errorf("%s: empty list", dim)
	}
	d, ok := Dim(dim)
	if !ok {
		return fmt.Errorf("unknown dimension %q (have %s)", dim, strings.Join(DimensionNames(), ", "))
	}
	return d.setValues(m, vals)
}

// Canonicalize replaces every workload spec by canon's form of it (the workload
// catalog's parser), dropping the duplicates that makes; an error names the spec.
func (m *Matrix) Canonicalize(canon func(spec string) (string, error)) error {
	var out []string
	for _, w := range m.Workloads {
		c, err := canon(w)
		if err != nil {
			return err
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	m.Workloads = out
	return nil
}

// Get renders one dimension's values as the list Set accepts; a dimension with a
// default and no values is at its default.
func (m Matrix) Get(dim string) string {
	d, _ := Dim(dim)
	return strings.Join(m.values(d), ",")
}

// values are the matrix's values of d, its default when it has none.
func (m Matrix) values(d Dimension) []string {
	if d.values == nil {
		return nil
	}
	if vs := d.values(m); len(vs) > 0 || d.Default == "" {
		return vs
	}
	return []string{d.Default}
}

func (m Matrix) changes() []rates.ChangeRate {
	if len(m.Changes) == 0 {
		return []rates.ChangeRate{{}}
	}
	return m.Changes
}

func (m Matrix) vnodes() []int {
	if len(m.Vnodes) == 0 {
		return []int{DefaultVnodes}
	}
	return m.Vnodes
}

func (m Matrix) limits() []rates.RateLimit {
	if len(m.Limits) == 0 {
		return []rates.RateLimit{{}}
	}
	return m.Limits
}

// Cells returns the cross product without the cells no job can be (Impossible
// says which). Persist varies fastest, so on and off of one configuration sit
// next to each other; profile varies slowest.
func (m Matrix) Cells() []Cell {
	return slices.DeleteFunc(m.cross(), func(c Cell) bool { return c.Par > c.VnodeCount() })
}

// Impossible says which cells of the cross product Cells leaves out, one line
// per vnode count with too many actors, and why: each actor owns at least one
// vnode, so a sweep of vnodes and par skips the pairs that cannot be.
func (m Matrix) Impossible() []string {
	var out []string
	for _, v := range m.vnodes() {
		var pars []string
		cells := 0
		for _, p := range m.Pars {
			if p > v {
				pars = append(pars, strconv.Itoa(p))
			}
		}
		if len(pars) == 0 {
			continue
		}
		for _, c := range m.cross() {
			if c.VnodeCount() == v && c.Par > v {
				cells++
			}
		}
		out = append(out, fmt.Sprintf("vnodes=%d with par=%s (%d cells): each actor owns at least one vnode", v, strings.Join(pars, ","), cells))
	}
	return out
}

// cross is the whole cross product, possible or not, in table order but with
// the paired dimensions varying fastest.
func (m Matrix) cross() []Cell {
	cells := []Cell{{}}
	unpaired := slices.DeleteFunc(Dims(), func(d Dimension) bool { return d.Paired })
	paired := slices.DeleteFunc(Dims(), func(d Dimension) bool { return !d.Paired })
	for _, d := range append(unpaired, paired...) {
		vals := m.values(d)
		out := make([]Cell, 0, len(cells)*len(vals))
		for _, c := range cells {
			for _, v := range vals {
				if d.set(&c, v) == nil {
					out = append(out, c)
				}
			}
		}
		cells = out
	}
	return cells
}

// Validate checks what no single dimension can: a change rate per second has no
// meaning for barriers cut by rows read, and some vnode count must have room for
// some actor count.
func (m Matrix) Validate() error {
	for _, b := range m.Barriers {
		for _, ch := range m.changes() {
			if b.WorkDriven() && ch.Per == "s" && ch.N > 0 {
				return fmt.Errorf("changes=%s with barrier=%s: a work-driven epoch has no duration; give changes per epoch, like --changes %d/epoch", ch, b, max(b.Rows/100, 1))
			}
		}
	}
	for _, b := range m.Barriers {
		for _, l := range m.limits() {
			if b.WorkDriven() && l.Paused() {
				return fmt.Errorf("limit=%s with barrier=%s: a paused scan reads no rows, so a barrier cut by rows read never comes to resume it; use a time barrier, like --barrier 100ms", l, b)
			}
		}
	}
	// Pairs of too many actors are skipped (Impossible); a matrix of nothing else is refused.
	if len(m.Pars) > 0 && slices.Min(m.Pars) > slices.Max(m.vnodes()) {
		return fmt.Errorf("--vnodes %s with --par %s: no cell left, as each actor owns at least one vnode; give at least %d vnodes or at most %d actors",
			m.Get("vnodes"), m.Get("par"), slices.Min(m.Pars), slices.Max(m.vnodes()))
	}
	return nil
}

// Only returns the matrix holding just this cell.
func (c Cell) Only() Matrix {
	var m Matrix
	for _, d := range Dims() {
		d.setValues(&m, []string{d.get(c)})
	}
	return m
}

// BenchRegexp matches this cell's sub-benchmark of BenchmarkBackfill and nothing else.
func (c Cell) BenchRegexp() string { return BenchRegexp(BenchmarkName, c.Name()) }

// BenchRegexp matches sub-benchmark name (its levels after base's) of Benchmark<base>
// and nothing else, for -test.bench.
func BenchRegexp(base, name string) string {
	parts := []string{"^Benchmark" + base + "$"}
	for _, p := range strings.Split(name, "/") {
		parts = append(parts, "^"+regexp.QuoteMeta(p)+"$")
	}
	return strings.Join(parts, "/")
}
