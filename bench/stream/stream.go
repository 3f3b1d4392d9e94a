// Package stream defines the messages between executors: data chunks and barriers.
package stream

import (
	"math/bits"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/row"
)

// Op is the change a chunk row carries.
type Op uint8

// The ops. An update is a pair: UpdateDelete (old row) then UpdateInsert (new row).
const (
	Insert Op = iota
	Delete
	UpdateDelete
	UpdateInsert
)

var opNames = [...]string{"+", "-", "U-", "U+"}

func (o Op) String() string { return opNames[o] }

// IsDelete reports whether o removes its row (Delete or UpdateDelete).
func (o Op) IsDelete() bool { return o == Delete || o == UpdateDelete }

// Bitmap is a fixed-size set of row positions.
type Bitmap []uint64

// NewBitmap returns a bitmap of n bits, all set when set is true.
func NewBitmap(n int, set bool) Bitmap {
	b := make(Bitmap, (n+63)/64)
	if set {
		b.SetAll(n)
	}
	return b
}

// SetAll sets bits [0, n).
func (b Bitmap) SetAll(n int) {
	for i := range b {
		b[i] = ^uint64(0)
	}
	if r := n % 64; r != 0 && len(b) > 0 {
		b[len(b)-1] = 1<<r - 1
	}
}

// Get reports bit i.
func (b Bitmap) Get(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }

// Set sets bit i to v.
func (b Bitmap) Set(i int, v bool) {
	if v {
		b[i/64] |= 1 << (i % 64)
	} else {
		b[i/64] &^= 1 << (i % 64)
	}
}

// Count returns the number of set bits.
func (b Bitmap) Count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// Chunk is a batch of changed rows with a visibility bitmap: an invisible row is
// carried but not applied downstream.
type Chunk struct {
	Ops  []Op
	Rows []row.Row
	Vis  Bitmap
}

// NewChunk returns an empty chunk with room for capacity rows.
func NewChunk(capacity int) *Chunk {
	return &Chunk{Ops: make([]Op, 0, capacity), Rows: make([]row.Row, 0, capacity)}
}

// Append adds a visible row.
func (c *Chunk) Append(op Op, r row.Row) {
	c.Ops = append(c.Ops, op)
	c.Rows = append(c.Rows, r)
}

// Len returns the number of rows, visible or not.
func (c *Chunk) Len() int { return len(c.Rows) }

// Visible reports whether row i is visible (every row is, until a bitmap is set).
func (c *Chunk) Visible(i int) bool { return c.Vis == nil || c.Vis.Get(i) }

// Cardinality returns the number of visible rows.
func (c *Chunk) Cardinality() int {
	if c.Vis == nil {
		return len(c.Rows)
	}
	return c.Vis.Count()
}

// Epoch is a barrier's epoch pair: the barrier ends epoch Curr; Prev was the one
// before.
type Epoch struct{ Prev, Curr uint64 }

// Barrier cuts the stream into epochs. It follows every chunk of its epoch.
type Barrier struct {
	Epoch      Epoch
	Injected   time.Time // when the injector emitted it: barrier latency starts here
	Checkpoint bool      // commit this epoch with a sync
	Final      bool      // the job drains and stops after this epoch
	// Snapshot backfill: a barrier of the creating job's own epochs (Epoch counts
	// them), not the upstream's; Replay, when > 0, is the upstream epoch whose
	// change log the creating job replays in it.
	Creating bool
	Replay   uint64
}

// Message is what flows on an executor's input: exactly one of Chunk or Barrier.
type Message struct {
	Chunk   *Chunk
	Barrier *Barrier
}

// Injector decides when barriers are due and which are checkpoints.
type Injector struct {
	Interval            time.Duration
	CheckpointFrequency int // every n-th barrier is a checkpoint (≤ 1: all)
	next                time.Time
}

// Start sets the first barrier due one interval after now.
func (in *Injector) Start(now time.Time) { in.next = now.Add(in.Interval) }

// Due returns when the next barrier is due.
func (in *Injector) Due() time.Time { return in.next }

// Inject returns the barrier ending epoch curr, injected at now, and schedules the
// next one an interval after now.
func (in *Injector) Inject(curr uint64, now time.Time, final bool) *Barrier {
	in.next = now.Add(in.Interval)
	freq := uint64(max(in.CheckpointFrequency, 1))
	return &Barrier{
		Epoch:      Epoch{Prev: curr - 1, Curr: curr},
		Injected:   now,
		Checkpoint: final || curr%freq == 0,
		Final:      final,
	}
}
