package backfill

import (
	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/stream"
)

// FilterUpTo keeps visible only the rows of c whose primary key is ≤ pos, the rows
// the snapshot scan has already emitted; pos nil (nothing scanned) hides every row.
// An update pair split by the position becomes a lone Delete or Insert, so that
// downstream never sees half an update.
func FilterUpTo(c *stream.Chunk, s *row.Schema, pos []row.Datum) {
	n := c.Len()
	if c.Vis == nil {
		c.Vis = stream.NewBitmap(n, true)
	}
	if pos == nil {
		c.Vis = stream.NewBitmap(n, false)
		return
	}
	for i, r := range c.Rows {
		if c.Vis.Get(i) && s.CompareRowToPK(r, pos) > 0 {
			c.Vis.Set(i, false)
		}
	}
	fixSplitUpdates(c)
}

// fixSplitUpdates turns an update pair with one half hidden into a lone Delete or
// Insert, so that downstream never sees half an update.
func fixSplitUpdates(c *stream.Chunk) {
	for i := 0; i+1 < c.Len(); i++ {
		if c.Ops[i] != stream.UpdateDelete || c.Ops[i+1] != stream.UpdateInsert {
			continue
		}
		switch old, cur := c.Vis.Get(i), c.Vis.Get(i+1); {
		case old && !cur:
			c.Ops[i] = stream.Delete
		case !old && cur:
			c.Ops[i+1] = stream.Insert
		}
		i++
	}
}
