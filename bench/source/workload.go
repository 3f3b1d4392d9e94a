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

// Mix is the share of each change kind in the stream; the shares need not sum to 1.
type Mix struct {
	Insert, Update, Delete float64
	// PKUpdate is the share of updates that change the row's primary key: the row
	// moves to a new key (and often another vnode and actor), so the update reaches
	// the backfill as a delete and an insert of different keys.
	PKUpdate float64
}

// DefaultMix is the built-in stream: mostly inserts and updates, some deletes.
var DefaultMix = Mix{Insert: 0.5, Update: 0.4, Delete: 0.1}

func (m Mix) validate() error {
	if m.Insert < 0 || m.Update < 0 || m.Delete < 0 || m.PKUpdate < 0 || m.Insert+m.Update+m.Delete+m.PKUpdate <= 0 {
		return fmt.Errorf("change mix %+v: shares must be ≥ 0 with a positive sum", m)
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

// epochRand is the generator of one epoch's changes: a function of (seed, epoch) only.
func epochRand(seed, epoch uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, Mix64(epoch+0x632BE59BD9B4E019)))
}
