// Package source generates table A's change stream per epoch, applies it to A and
// routes each change to the backfill actor owning the row's vnode.
package source

import (
	"fmt"
	"math/rand/v2"

	"github.com/backfill-bench/backfill-bench/bench/row"
)

// Workload describes table A: its schema and the content of every row. Rows are
// addressed by a key id (0, 1, 2, … in insertion order) and a version (1 for the
// insert, +1 per update), so that the change stream is a pure function of the seed
// and the epoch and can be replayed after a crash.
type Workload interface {
	Name() string
	Schema() *row.Schema
	// Row returns the row of key id at version (≥ 1), reusing dst's storage. It must
	// be a pure function of (seed, id, version) and keep the primary key a function
	// of id alone.
	Row(dst row.Row, seed uint64, id int64, version uint32) row.Row
}

// KeyIndex maps a primary key back to its key id, so that changes can be aimed at
// a scan's position (Mix.Boundary). A workload without it gets no boundary changes.
type KeyIndex interface {
	// IDOf returns the key id whose rows have primary key pk (one datum per PK
	// column), and false when pk is no key the workload generates.
	IDOf(pk []row.Datum) (int64, bool)
	// Stride is the id distance between a key and the keys just below and above it
	// in primary-key order (id ± Stride); 0 when ids are scattered over the key space.
	Stride() int64
}

// Mix is the share of each change kind in the stream; the shares need not sum to 1.
type Mix struct {
	Insert, Update, Delete float64
	// PKUpdate is the share of updates that change the row's primary key: the row
	// moves to a new key (and often another vnode and actor), so the update reaches
	// the backfill as a delete and an insert of different keys.
	PKUpdate float64
	// Boundary, on top of the shares above, is the fraction of each epoch's changes
	// (at least one) aimed at where the scans stand when the epoch ends: updates of
	// the row at a position, just below it and just above it (Config.Positions),
	// so that filter and resume bugs at pk = position fire in ordinary runs.
	Boundary float64
}

// DefaultMix is the built-in stream: mostly inserts and updates, some deletes, and
// 5 % more aimed at the scan positions.
var DefaultMix = Mix{Insert: 0.5, Update: 0.4, Delete: 0.1, Boundary: 0.05}

func (m Mix) validate() error {
	if m.Insert < 0 || m.Update < 0 || m.Delete < 0 || m.PKUpdate < 0 || m.Insert+m.Update+m.Delete+m.PKUpdate <= 0 {
		return fmt.Errorf("change mix %+v: shares must be ≥ 0 with a positive sum", m)
	}
	if m.Boundary < 0 || m.Boundary > 1 {
		return fmt.Errorf("change mix %+v: the boundary share must be in [0, 1]", m)
	}
	return nil
}

// Mix64 is SplitMix64's finalizer: a cheap bijection on uint64 that spreads bits well,
// for deriving row contents and keys from (seed, id, version).
func Mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 27
	x *= 0x94D049BB133111EB
	return x ^ x>>31
}

// Unmix64 inverts Mix64.
func Unmix64(x uint64) uint64 {
	x = unshift(x, 31)
	x *= mulInverse(0x94D049BB133111EB)
	x = unshift(x, 27)
	x *= mulInverse(0xBF58476D1CE4E5B9)
	return unshift(x, 30)
}

// unshift inverts x ^= x >> k.
func unshift(x uint64, k uint) uint64 {
	y := x
	for i := k; i < 64; i += k {
		y = x ^ y>>k
	}
	return y
}

// mulInverse is the inverse of odd a modulo 2⁶⁴ (Newton's iteration doubles the
// correct low bits each step: 5 steps from 3 bits reach 64).
func mulInverse(a uint64) uint64 {
	x := a // a·a ≡ 1 mod 8 for odd a
	for range 5 {
		x *= 2 - a*x
	}
	return x
}

// epochRand is the generator of one epoch's changes: a function of (seed, epoch) only.
func epochRand(seed, epoch uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, Mix64(epoch+0x632BE59BD9B4E019)))
}
