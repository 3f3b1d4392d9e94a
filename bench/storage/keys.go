// Package storage lays the engine's tables on one Pebble DB: table|vnode|pk keys,
// vnode hashing, atomic epoch commits and per-epoch snapshots.
package storage

import (
	"encoding/binary"
	"hash/crc32"
	"math/bits"

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

// castagnoli8 extends castagnoli for 8 bytes a step (slicing-by-8): entry k of a
// byte is its effect on the crc followed by k zero bytes. Read only.
var castagnoli8 = func() *[8][256]uint32 {
	t := new([8][256]uint32)
	t[0] = *castagnoli
	for k := 1; k < 8; k++ {
		for i := range 256 {
			c := t[k-1][i]
			t[k][i] = t[0][byte(c)] ^ c>>8
		}
	}
	return t
}()

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

// Of returns the vnode owning r: crc32 (Castagnoli) of its distribution key's
// memcomparable encoding, mod count. An integer or timestamp column (nearly every
// key) is hashed from its value, 8 bytes a step, without encoding it first (the
// same bytes, the same crc; TestVnoderOfMatchesEncoding): the progress check
// hashes every snapshot row's vnode, so this is per-row work.
func (v *Vnoder) Of(r row.Row) uint16 {
	if v.count == 1 {
		return 0
	}
	crc := ^uint32(0) // the crc's state between bytes (crc32.Update inverts it at both ends)
	t := castagnoli8
	for _, c := range v.schema.DistKey {
		d := &r[c]
		if d.Kind != row.Int64 && d.Kind != row.Timestamp {
			v.scratch = memcmp.AppendDatum(v.scratch[:0], *d)
			crc = ^crc32.Update(^crc, castagnoli, v.scratch)
			continue
		}
		crc = crcInt(t, crc, d.Kind, d.I)
	}
	return uint16(^crc % uint32(v.count))
}

// OfRows appends the vnode of each of rows to dst (Of of each), in one loop: a
// distribution key of one integer column is hashed inline, row after row.
func (v *Vnoder) OfRows(dst []uint16, rows []row.Row) []uint16 {
	if v.count == 1 || len(v.schema.DistKey) != 1 {
		for _, r := range rows {
			dst = append(dst, v.Of(r))
		}
		return dst
	}
	t, col, count := castagnoli8, v.schema.DistKey[0], uint32(v.count)
	for _, r := range rows {
		d := &r[col]
		if d.Kind != row.Int64 && d.Kind != row.Timestamp {
			dst = append(dst, v.Of(r))
			continue
		}
		// crcInt's steps, inline.
		crc := t[0][byte(0xFF)^byte(d.Kind)] ^ 0xFFFFFF
		u := uint64(d.I) ^ 1<<63
		crc ^= bits.ReverseBytes32(uint32(u >> 32))
		crc = t[7][byte(crc)] ^ t[6][byte(crc>>8)] ^ t[5][byte(crc>>16)] ^ t[4][byte(crc>>24)] ^
			t[3][byte(u>>24)] ^ t[2][byte(u>>16)] ^ t[1][byte(u>>8)] ^ t[0][byte(u)]
		dst = append(dst, uint16(^crc%count))
	}
	return dst
}

// crcInt continues crc (its state between bytes) over memcmp's encoding of an
// integer datum of kind k: the kind byte, then x with its sign bit flipped, 8
// bytes big-endian (b0 first).
func crcInt(t *[8][256]uint32, crc uint32, k row.Kind, x int64) uint32 {
	crc = t[0][byte(crc)^byte(k)] ^ crc>>8
	u := uint64(x) ^ 1<<63
	crc ^= bits.ReverseBytes32(uint32(u >> 32)) // b0..b3, the first in the low byte
	return t[7][byte(crc)] ^ t[6][byte(crc>>8)] ^ t[5][byte(crc>>16)] ^ t[4][byte(crc>>24)] ^
		t[3][byte(u>>24)] ^ t[2][byte(u>>16)] ^ t[1][byte(u>>8)] ^ t[0][byte(u)]
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
