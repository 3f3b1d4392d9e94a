package compactsched

import (
	"sync"

	"github.com/cockroachdb/pebble/v2"
)

// Gate is a Pebble CompactionScheduler that starts no compaction on its
// own: the store runs them at each checkpoint, after its flush, one at a time and
// to completion (Drain), as the engine's compactor runs tasks picked from the
// LSM's state (L0's sub-level count) rather than when a background thread gets to
// them. What a compaction rewrites then depends on the checkpoints' data only, not
// on timing, so its bytes repeat from run to run.
type Gate struct {
	db pebble.DBForCompaction // set by Register, before any other call

	mu      sync.Mutex
	running bool
	idle    *sync.Cond // running became false
	closed  bool
	drains  sync.Mutex // one drain at a time
	started int64      // compactions the gate started (mu)
}

var _ pebble.CompactionScheduler = (*Gate)(nil)

// NewGate returns a gate for one DB (Options.Experimental.CompactionScheduler).
func NewGate() *Gate {
	g := &Gate{}
	g.idle = sync.NewCond(&g.mu)
	return g
}

// Register implements pebble.CompactionScheduler.
func (g *Gate) Register(_ int, db pebble.DBForCompaction) { g.db = db }

// Unregister implements pebble.CompactionScheduler: no Drain starts another
// compaction after it returns.
func (g *Gate) Unregister() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// TrySchedule implements pebble.CompactionScheduler: Pebble's own requests are
// refused; the compaction it picked waits for the next Drain.
func (g *Gate) TrySchedule() (bool, pebble.CompactionGrantHandle) { return false, nil }

// UpdateGetAllowedWithoutPermission implements pebble.CompactionScheduler.
func (g *Gate) UpdateGetAllowedWithoutPermission() {}

// Started, MeasureCPU and CumulativeStats implement pebble.CompactionGrantHandle.
func (g *Gate) Started()                                          {}
func (g *Gate) MeasureCPU(pebble.CompactionGoroutineKind)         {}
func (g *Gate) CumulativeStats(pebble.CompactionGrantHandleStats) {}

// Done implements pebble.CompactionGrantHandle: the running compaction ended.
func (g *Gate) Done() {
	g.mu.Lock()
	g.running = false
	g.idle.Broadcast()
	g.mu.Unlock()
}

// Drain runs the compactions Pebble's picker asks for, one at a time, each to its
// end, until it asks for none: the picker sees the LSM each previous compaction
// left. Pebble picks as it would on its own (L0 by its sub-level count against
// L0CompactionThreshold, the other levels by size).
func (g *Gate) Drain() {
	g.drains.Lock()
	defer g.drains.Unlock()
	for {
		g.mu.Lock()
		closed := g.closed
		g.mu.Unlock()
		if closed {
			return
		}
		if waiting, _ := g.db.GetWaitingCompaction(); !waiting {
			return
		}
		g.mu.Lock()
		g.running = true
		g.mu.Unlock()
		if !g.db.Schedule(g) {
			g.mu.Lock()
			g.running = false
			g.mu.Unlock()
			return
		}
		g.mu.Lock()
		g.started++
		for g.running {
			g.idle.Wait()
		}
		g.mu.Unlock()
	}
}

// Count is how many compactions the gate has started.
func (g *Gate) Count() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.started
}
