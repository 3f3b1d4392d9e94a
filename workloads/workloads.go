// Package workloads defines the named, seeded upstream workloads: a table (schema and
// rows from gofakeit value pools), a key distribution and a change mix.
package workloads

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"github.com/brianvoe/gofakeit/v7"

	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/source"
)

// Spec names a workload: a table, then optionally a key distribution and a change mix,
// joined by '+': "bid", "narrow+zipfian", "person+uniform+update-heavy",
// "narrow+zipfian:1.3+tombstone". Its String is what benchmark names carry.
type Spec struct {
	Table string
	Keys  string // sequential (default), uniform, zipfian[:s], hot-range
	Mix   string // default, insert-only, update-heavy, delete-heavy, tombstone
}

// Key distributions: where inserted keys land in pk order, and which existing keys
// updates and deletes touch.
var keyDists = []struct{ name, desc string }{
	{"sequential", "append-only: pk = insertion order, so inserts land after the scan; updates and deletes pick keys uniformly"},
	{"uniform", "pks scattered over the key space; updates and deletes pick keys uniformly"},
	{"zipfian", "pks scattered; updates and deletes follow Zipf(s) over key ids, s = 1.1 unless zipfian:s"},
	{"hot-range", "pk = insertion order; 90% of updates and deletes hit a hot 10% range of ids"},
}

// Change mixes: shares of inserts, updates and deletes.
var mixes = []struct {
	name, desc string
	mix        source.Mix
	burst      *source.Burst
}{
	{"default", "50% inserts, 40% updates, 10% deletes; 5% more aimed at the scan positions", source.DefaultMix, nil},
	{"boundary-heavy", "the default mix with 50% more aimed at the scan positions: updates of the row at a scan's position, just below and just above it",
		source.Mix{Insert: 0.5, Update: 0.4, Delete: 0.1, Boundary: 0.5}, nil},
	{"insert-only", "inserts only", source.Mix{Insert: 1}, nil},
	{"update-heavy", "10% inserts, 85% updates, 5% deletes", source.Mix{Insert: 0.1, Update: 0.85, Delete: 0.05}, nil},
	{"delete-heavy", "20% inserts, 20% updates, 60% deletes", source.Mix{Insert: 0.2, Update: 0.2, Delete: 0.6}, nil},
	{"pk-update", "20% inserts, 20% updates, 50% updates that change the primary key (a delete and an insert, often of different vnodes and actors), 10% deletes",
		source.Mix{Insert: 0.2, Update: 0.2, PKUpdate: 0.5, Delete: 0.1}, nil},
	{"tombstone", "default mix plus, every 5th epoch, a burst deleting a run of 2% of the keys in the upper half of the id space (ahead of the scan): rebuilt scans skip the dead keys",
		source.DefaultMix, &source.Burst{Every: 5, Fraction: 0.02}},
}

// ParseSpec parses "table[+keys][+mix]"; the parts after the table may come in
// either order.
func ParseSpec(s string) (Spec, error) {
	parts := strings.Split(s, "+")
	sp := Spec{Table: parts[0]}
	if findTable(sp.Table) == nil {
		return sp, fmt.Errorf("workload %q: unknown table %q (have %s)", s, sp.Table, strings.Join(tableNames(), ", "))
	}
	for _, p := range parts[1:] {
		switch {
		case isKeyDist(p):
			if sp.Keys != "" {
				return sp, fmt.Errorf("workload %q: two key distributions", s)
			}
			sp.Keys = p
		case findMix(p) >= 0:
			if sp.Mix != "" {
				return sp, fmt.Errorf("workload %q: two change mixes", s)
			}
			sp.Mix = p
		default:
			return sp, fmt.Errorf("workload %q: %q is neither a key distribution (%s) nor a change mix (%s)", s, p, strings.Join(keyDistNames(), ", "), strings.Join(mixNames(), ", "))
		}
	}
	if _, err := zipfS(sp.Keys); err != nil {
		return sp, fmt.Errorf("workload %q: %w", s, err)
	}
	return sp, nil
}

// Canonical is the canonical form of a workload spec, the one cell names carry:
// "narrow+sequential+default" is "narrow".
func Canonical(spec string) (string, error) {
	sp, err := ParseSpec(spec)
	return sp.String(), err
}

func (s Spec) String() string {
	out := s.Table
	if s.Keys != "" && s.Keys != "sequential" {
		out += "+" + s.Keys
	}
	if s.Mix != "" && s.Mix != "default" {
		out += "+" + s.Mix
	}
	return out
}

func isKeyDist(p string) bool {
	name, _, _ := strings.Cut(p, ":")
	for _, k := range keyDists {
		if k.name == name {
			return name == "zipfian" || !strings.Contains(p, ":")
		}
	}
	return false
}

// zipfS returns the Zipf exponent of a "zipfian[:s]" distribution (1.1 by default).
func zipfS(keys string) (float64, error) {
	name, arg, ok := strings.Cut(keys, ":")
	if name != "zipfian" {
		return 0, nil
	}
	if !ok {
		return 1.1, nil
	}
	s, err := strconv.ParseFloat(arg, 64)
	if err != nil || s <= 1 || s > 10 {
		return 0, fmt.Errorf("zipfian exponent %q: want a number in (1, 10]", arg)
	}
	return s, nil
}

func findMix(name string) int {
	for i, m := range mixes {
		if m.name == name {
			return i
		}
	}
	return -1
}

func keyDistNames() []string {
	var n []string
	for _, k := range keyDists {
		n = append(n, k.name)
	}
	return n
}

func mixNames() []string {
	var n []string
	for _, m := range mixes {
		n = append(n, m.name)
	}
	return n
}

// Workload is a built workload: it implements source.Workload and source.KeyPicker.
type Workload struct {
	spec    Spec
	table   *table
	pools   pools
	scatter bool // pk = a bijective scramble of the key id, not the id itself
	seed    uint64
	pick    func(r *rand.Rand, n int64) int64
}

// New builds the workload of spec for seed: its value pools come from gofakeit seeded
// with seed, so the same (spec, seed) gives the same rows on any machine.
func New(spec Spec, seed uint64) (*Workload, error) {
	t := findTable(spec.Table)
	if t == nil {
		return nil, fmt.Errorf("workload: unknown table %q (have %s)", spec.Table, strings.Join(tableNames(), ", "))
	}
	if spec.Mix != "" && findMix(spec.Mix) < 0 {
		return nil, fmt.Errorf("workload: unknown change mix %q (have %s)", spec.Mix, strings.Join(mixNames(), ", "))
	}
	w := &Workload{spec: spec, table: t, pools: t.fill(gofakeit.New(seed)), seed: seed}
	name, _, _ := strings.Cut(spec.Keys, ":")
	switch name {
	case "", "sequential":
		w.pick = func(r *rand.Rand, n int64) int64 { return r.Int64N(n) }
	case "uniform":
		w.scatter = true
		w.pick = func(r *rand.Rand, n int64) int64 { return r.Int64N(n) }
	case "zipfian":
		s, err := zipfS(spec.Keys)
		if err != nil {
			return nil, fmt.Errorf("workload: %w", err)
		}
		w.scatter = true
		w.pick = func(r *rand.Rand, n int64) int64 {
			if n < 2 {
				return 0
			}
			return int64(rand.NewZipf(r, s, 1, uint64(n-1)).Uint64())
		}
	case "hot-range":
		w.pick = func(r *rand.Rand, n int64) int64 {
			if r.Float64() < 0.9 {
				lo := n * 45 / 100
				return lo + r.Int64N(max(n/10, 1))
			}
			return r.Int64N(n)
		}
	default:
		return nil, fmt.Errorf("workload: unknown key distribution %q (have %s)", spec.Keys, strings.Join(keyDistNames(), ", "))
	}
	return w, nil
}

// Parse builds the workload named s (see ParseSpec) for seed.
func Parse(s string, seed uint64) (*Workload, error) {
	sp, err := ParseSpec(s)
	if err != nil {
		return nil, err
	}
	return New(sp, seed)
}

// Name implements source.Workload.
func (w *Workload) Name() string { return w.spec.String() }

// Schema implements source.Workload.
func (w *Workload) Schema() *row.Schema { return &w.table.schema }

// Row implements source.Workload: the row of key id at version, a pure function of
// (seed, id, version) and the value pools.
func (w *Workload) Row(dst row.Row, seed uint64, id int64, version uint32) row.Row {
	pk := id
	if w.scatter {
		pk = int64(source.Mix64(uint64(id) ^ seed))
	}
	h1 := source.Mix64(seed ^ uint64(id)*0x9E3779B97F4A7C15 ^ uint64(version)<<40)
	h2 := source.Mix64(h1 ^ 0xD6E8FEB86659FD93)
	return w.table.row(dst, w.pools, pk, h1, h2)
}

// IDOf implements source.KeyIndex.
func (w *Workload) IDOf(pk []row.Datum) (int64, bool) {
	k, ok := int64(0), len(pk) == len(w.table.schema.PK)
	if ok && w.table.keyOf != nil {
		k, ok = w.table.keyOf(pk)
	} else if ok {
		k, ok = pk[0].I, pk[0].Kind == row.Int64
	}
	if !ok {
		return 0, false
	}
	if w.scatter {
		return int64(source.Unmix64(uint64(k)) ^ w.seed), true
	}
	return k, true
}

// Stride implements source.KeyIndex: scattered keys have no known neighbours.
func (w *Workload) Stride() int64 {
	if w.scatter {
		return 0
	}
	return max(w.table.stride, 1)
}

// Pick implements source.KeyPicker.
func (w *Workload) Pick(r *rand.Rand, n int64) int64 { return w.pick(r, n) }

// Mix returns the workload's change mix and its delete bursts (nil: none).
func (w *Workload) Mix() (source.Mix, *source.Burst) {
	i := max(findMix(w.spec.Mix), 0)
	return mixes[i].mix, mixes[i].burst
}

// Info describes one choice for the listing.
type Info struct {
	Kind, Name, Description string
	Columns                 []row.Column // tables only
	PK, DistKey             []string     // tables only
}

// List returns every table, key distribution and change mix, for `benchrun workloads`.
func List() []Info {
	var out []Info
	for _, t := range tables {
		in := Info{Kind: "table", Name: t.name, Description: t.desc, Columns: t.schema.Columns}
		for _, c := range t.schema.PK {
			in.PK = append(in.PK, t.schema.Columns[c].Name)
		}
		for _, c := range t.schema.DistKey {
			in.DistKey = append(in.DistKey, t.schema.Columns[c].Name)
		}
		out = append(out, in)
	}
	for _, k := range keyDists {
		out = append(out, Info{Kind: "keys", Name: k.name, Description: k.desc})
	}
	for _, m := range mixes {
		out = append(out, Info{Kind: "mix", Name: m.name, Description: m.desc})
	}
	return out
}

// Names returns the named workloads that tests and benchmarks cover: every table
// with its defaults, plus every key distribution and every change mix on narrow.
func Names() []string {
	names := tableNames()
	for _, k := range keyDistNames()[1:] {
		names = append(names, "narrow+"+k)
	}
	for _, m := range mixNames()[1:] {
		names = append(names, "narrow+"+m)
	}
	sort.Strings(names[len(tableNames()):])
	return names
}
