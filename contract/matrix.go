package contract

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Scans are the names of the scan strategies the executor implements (ScanKinds);
// the bench package's tests check that the model has exactly these. In RisingWave's
// terms: merged is no-shuffle backfill (deprecated, #25963), per-vnode arrangement
// backfill, snapshot snapshot backfill (the default, #24116).
var Scans = scanNames()

// Reads are the read modes of a scan reopened after a barrier (DESIGN §2.3); the
// first is the default, left out of cell names.
var Reads = []string{"uncommitted", "checkpoint"}

// Dimensions are the keys of a cell name, in name order. They are also the flag names,
// taking comma-separated lists, of the benchmark binary and of `benchrun run`.
var Dimensions = []string{"profile", "workload", "rows", "persist", "scan", "barrier", "changes", "limit", "read", "ckpt", "vnodes", "chunk", "par"}

// MaxPar is the most actors a job can have: the vnode count, each actor owning at
// least one vnode (the bench package's tests check it against the storage layer).
const MaxPar = 256

// optional are the dimensions a name leaves out at their default.
var optional = map[string]bool{"changes": true, "limit": true, "read": true, "ckpt": true, "vnodes": true, "chunk": true}

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
	Barriers  []Cadence
	Changes   []ChangeRate // empty: the default only
	Limits    []RateLimit  // empty: none only
	Reads     []string     // read modes; empty: the default only
	Ckpts     []int        // checkpoint frequencies; empty: 1 only
	Vnodes    []int        // vnode counts; empty: DefaultVnodes only
	Chunks    []int        // snapshot chunk sizes; empty: DefaultChunk only
	Pars      []int
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
	bad := func(v string, why any) error { return fmt.Errorf("%s %q: %v", dim, v, why) }
	var err error
	switch dim {
	case "profile", "workload":
		for _, v := range vals {
			if strings.ContainsAny(v, "/= ") {
				return bad(v, "a "+dim+" name has no '/', '=' or space")
			}
		}
		if dim == "profile" {
			m.Profiles = vals
		} else {
			m.Workloads = vals
		}
	case "rows":
		m.Rows = nil
		for _, v := range vals {
			n, err := strconv.ParseInt(strings.ReplaceAll(v, "_", ""), 10, 64)
			if err != nil || n < 0 {
				return bad(v, "want a row count ≥ 0")
			}
			m.Rows = append(m.Rows, n)
		}
	case "persist":
		m.Persist = nil
		for _, v := range vals {
			if v != "on" && v != "off" {
				return bad(v, "want on, off or on,off")
			}
			m.Persist = append(m.Persist, v == "on")
		}
	case "scan":
		for _, v := range vals {
			if !slices.Contains(Scans, v) {
				return bad(v, fmt.Sprintf("unknown scan (have %s)", strings.Join(Scans, ", ")))
			}
		}
		m.Scans = vals
	case "barrier":
		m.Barriers, err = parseEach(vals, ParseCadence)
	case "changes":
		m.Changes, err = parseEach(vals, ParseChangeRate)
	case "limit":
		m.Limits, err = parseEach(vals, ParseRateLimit)
	case "read":
		for _, v := range vals {
			if !slices.Contains(Reads, v) {
				return bad(v, fmt.Sprintf("unknown read mode (have %s)", strings.Join(Reads, ", ")))
			}
		}
		m.Reads = vals
	case "ckpt":
		m.Ckpts, err = parseEach(vals, intIn(bad, 1, math.MaxInt, "want a checkpoint frequency ≥ 1 (every n-th barrier syncs)"))
	case "vnodes":
		m.Vnodes, err = parseEach(vals, intIn(bad, 1, MaxVnodes, fmt.Sprintf("want a vnode count from 1 to %d", MaxVnodes)))
	case "chunk":
		m.Chunks, err = parseEach(vals, intIn(bad, 2, MaxChunk, fmt.Sprintf("want a snapshot chunk size from 2 to %d rows (the engine's default is %d)", MaxChunk, DefaultChunk)))
	case "par":
		m.Pars, err = parseEach(vals, intIn(bad, 1, MaxPar, fmt.Sprintf("want an actor count from 1 to %d (each actor owns at least one of the %d vnodes)", MaxPar, MaxPar)))
	default:
		return fmt.Errorf("unknown dimension %q (have %s)", dim, strings.Join(Dimensions, ", "))
	}
	return err
}

// parseEach parses every value of a list, stopping at the first it refuses.
func parseEach[T any](vals []string, parse func(string) (T, error)) ([]T, error) {
	out := make([]T, 0, len(vals))
	for _, v := range vals {
		x, err := parse(v)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// intIn parses an integer from lo to hi; bad words the error, why says what is
// wanted.
func intIn(bad func(string, any) error, lo, hi int, why string) func(string) (int, error) {
	return func(v string) (int, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return 0, bad(v, why)
		}
		return n, nil
	}
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

// Get renders one dimension's values as the list Set accepts.
func (m Matrix) Get(dim string) string {
	var out []string
	switch dim {
	case "profile":
		out = m.Profiles
	case "workload":
		out = m.Workloads
	case "scan":
		out = m.Scans
	case "rows":
		for _, n := range m.Rows {
			out = append(out, strconv.FormatInt(n, 10))
		}
	case "persist":
		for _, b := range m.Persist {
			out = append(out, OnOff(b))
		}
	case "barrier":
		for _, c := range m.Barriers {
			out = append(out, c.String())
		}
	case "changes":
		for _, r := range m.changes() {
			out = append(out, r.String())
		}
	case "limit":
		for _, l := range m.limits() {
			out = append(out, l.String())
		}
	case "read":
		out = m.reads()
	case "ckpt":
		for _, n := range m.ckpts() {
			out = append(out, strconv.Itoa(n))
		}
	case "vnodes":
		for _, n := range m.vnodes() {
			out = append(out, strconv.Itoa(n))
		}
	case "chunk":
		for _, n := range m.chunks() {
			out = append(out, strconv.Itoa(n))
		}
	case "par":
		for _, n := range m.Pars {
			out = append(out, strconv.Itoa(n))
		}
	}
	return strings.Join(out, ",")
}

func (m Matrix) changes() []ChangeRate {
	if len(m.Changes) == 0 {
		return []ChangeRate{{}}
	}
	return m.Changes
}

func (m Matrix) reads() []string {
	if len(m.Reads) == 0 {
		return Reads[:1]
	}
	return m.Reads
}

func (m Matrix) vnodes() []int {
	if len(m.Vnodes) == 0 {
		return []int{DefaultVnodes}
	}
	return m.Vnodes
}

func (m Matrix) chunks() []int {
	if len(m.Chunks) == 0 {
		return []int{DefaultChunk}
	}
	return m.Chunks
}

func (m Matrix) ckpts() []int {
	if len(m.Ckpts) == 0 {
		return []int{1}
	}
	return m.Ckpts
}

func (m Matrix) limits() []RateLimit {
	if len(m.Limits) == 0 {
		return []RateLimit{{}}
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

// cross is the whole cross product, possible or not.
func (m Matrix) cross() []Cell {
	cells := []Cell{{}}
	// expand crosses the cells so far with n values of one dimension.
	expand := func(n int, set func(c *Cell, i int)) {
		out := make([]Cell, 0, len(cells)*n)
		for _, c := range cells {
			for i := range n {
				set(&c, i)
				out = append(out, c)
			}
		}
		cells = out
	}
	changes, limits, reads, ckpts, vnodes, chunks := m.changes(), m.limits(), m.reads(), m.ckpts(), m.vnodes(), m.chunks()
	expand(len(m.Profiles), func(c *Cell, i int) { c.Profile = m.Profiles[i] })
	expand(len(m.Workloads), func(c *Cell, i int) { c.Workload = m.Workloads[i] })
	expand(len(m.Rows), func(c *Cell, i int) { c.Rows = m.Rows[i] })
	expand(len(m.Scans), func(c *Cell, i int) { c.Scan = m.Scans[i] })
	expand(len(m.Barriers), func(c *Cell, i int) { c.Barrier = m.Barriers[i] })
	expand(len(changes), func(c *Cell, i int) { c.Changes = changes[i] })
	expand(len(limits), func(c *Cell, i int) { c.Limit = limits[i] })
	expand(len(reads), func(c *Cell, i int) { c.Read = reads[i] })
	expand(len(ckpts), func(c *Cell, i int) { c.Ckpt = ckpts[i] })
	expand(len(vnodes), func(c *Cell, i int) { c.Vnodes = vnodes[i] })
	expand(len(chunks), func(c *Cell, i int) { c.Chunk = chunks[i] })
	expand(len(m.Pars), func(c *Cell, i int) { c.Par = m.Pars[i] })
	expand(len(m.Persist), func(c *Cell, i int) { c.Persist = m.Persist[i] })
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
	return Matrix{
		Profiles: []string{c.Profile}, Workloads: []string{c.Workload}, Rows: []int64{c.Rows},
		Persist: []bool{c.Persist}, Scans: []string{c.Scan}, Barriers: []Cadence{c.Barrier},
		Changes: []ChangeRate{c.Changes}, Limits: []RateLimit{c.Limit}, Reads: []string{c.ReadMode()}, Ckpts: []int{c.Checkpoint()}, Vnodes: []int{c.VnodeCount()},
		Chunks: []int{c.ChunkSize()}, Pars: []int{c.Par},
	}
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
