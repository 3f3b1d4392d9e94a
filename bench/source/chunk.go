package source

import (
	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/stream"
)

// chunkBuilder fills chunks whose rows share one datum slab, so a chunk costs three
// allocations rather than one per row.
type chunkBuilder struct {
	size, cols int
	c          *stream.Chunk
	slab       []row.Datum
}

func newChunkBuilder(size, cols int) *chunkBuilder { return &chunkBuilder{size: size, cols: cols} }

// add copies r into the chunk and returns the copy.
func (cb *chunkBuilder) add(op stream.Op, r row.Row) row.Row {
	if cb.c == nil {
		cb.c = stream.NewChunk(cb.size)
		cb.slab = make([]row.Datum, 0, cb.size*cb.cols)
	}
	start := len(cb.slab)
	cb.slab = append(cb.slab, r...)
	cp := row.Row(cb.slab[start:len(cb.slab):len(cb.slab)])
	cb.c.Append(op, cp)
	return cp
}

func (cb *chunkBuilder) room() int {
	if cb.c == nil {
		return cb.size
	}
	return cb.size - cb.c.Len()
}

func (cb *chunkBuilder) full() bool { return cb.c != nil && cb.c.Len() >= cb.size }

// take returns the chunk built so far (nil if empty) and starts a new one.
func (cb *chunkBuilder) take() *stream.Chunk {
	c := cb.c
	cb.c, cb.slab = nil, nil
	if c == nil || c.Len() == 0 {
		return nil
	}
	return c
}
