// Package storage lays the engine's tables on one Pebble DB: table|vnode|pk keys,
// vnode hashing, atomic epoch commits and per-epoch snapshots.
package storage

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/backfill-bench/backfill-bench/bench/memcmp"
	"github.com/backfill-bench/backfill-bench/bench/row"
)

// TableID names a table in the key space.
type TableID uint32

// The job's tables, all in one DB.
const (
	TableUpstream TableID = 1 // A, the upstream table
	TableMV       TableID = 2 // B, the materialized view being built
	TableState    TableID = 3 // the backfill state table, one row per vnode
	TableMeta     TableID = 4 // job metadata: committed_epoch
	TableScratch  TableID = 5 // raw-copy baseline target
)

// PrefixLen is the length of the table|vnode prefix of every key.
const PrefixLen = 6

// DefaultVnodes is the engine's vnode count.
const DefaultVnodes = 256

// AppendPrefix appends table (u32 BE) | vnode (u16 BE).
func AppendPrefix(dst []byte, t TableID, vnode uint16) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(t))
	return binary.BigEndian.AppendUint16(dst, vnode)
}

// AppendRowKey appends the full key of r in table t: prefix then memcomparable pk.
func AppendRowKey(dst []byte, t TableID, vnode uint16, s *row.Schema, r row.Row) []byte {
	return memcmp.AppendRowKey(AppendPrefix(dst, t, vnode), s, r)
}

// TableBounds returns [lo, hi) covering every key of table t.
func TableBounds(t TableID) (lo, hi []byte) {
	return binary.BigEndian.AppendUint32(nil, uint32(t)), binary.BigEndian.AppendUint32(nil, uint32(t)+1)
}

// VnodeBounds returns [lo, hi) covering the keys of one vnode of table t.
func VnodeBounds(t TableID, vnode uint16) (lo, hi []byte) {
	lo = AppendPrefix(nil, t, vnode)
	if vnode == 0xFFFF {
		return lo, binary.BigEndian.AppendUint32(nil, uint32(t)+1)
	}
	return lo, AppendPrefix(nil, t, vnode+1)
}

// KeyVnode returns the vnode of a full key.
func KeyVnode(key []byte) uint16 { return binary.BigEndian.Uint16(key[4:PrefixLen]) }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Vnoder computes vnode = crc32(memcomparable distribution key) mod count. It holds a
// scratch buffer, so use one per goroutine.
type Vnoder struct {
	schema  *row.Schema
	count   int
	scratch []byte
}

// NewVnoder returns a Vnoder for schema s and count vnodes.
func NewVnoder(s *row.Schema, count int) *Vnoder {
	return &Vnoder{schema: s, count: count}
}

// Of returns the vnode owning r.
func (v *Vnoder) Of(r row.Row) uint16 {
	if v.count == 1 {
		return 0
	}
	b := v.scratch[:0]
	for _, c := range v.schema.DistKey { // each column encoded in place: no copy of the datums
		b = memcmp.AppendDatum(b, r[c])
	}
	if cap(b) != cap(v.scratch) { // grown: kept for the next rows (a store only then)
		v.scratch = b
	}
	return uint16(crc32.Update(0, castagnoli, b) % uint32(v.count))
}

// OwnedVnodes returns the contiguous vnode range [lo, hi) of actor i of par, splitting
// count vnodes as evenly as possible.
func OwnedVnodes(i, par, count int) (lo, hi int) {
	return i * count / par, (i + 1) * count / par
}

// OwnerOf returns the actor that owns vnode under OwnedVnodes.
func OwnerOf(vnode, par, count int) int {
	// Largest i with i*count/par <= vnode.
	i := (vnode*par + par - 1) / count
	for i > 0 && i*count/par > vnode {
		i--
	}
	for i+1 < par && (i+1)*count/par <= vnode {
		i++
	}
	return i
}
