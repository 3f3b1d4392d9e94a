package source

import (
	"sync"
	"sync/atomic"
)

// Gate tells a source whose barriers are cut by work (every N snapshot rows read
// by all actors together) when the epoch's rows are read: each actor reads its
// share and reports it full, or reports its scan ended. Cutting epochs by work, not
// by the clock, makes every run of a job produce the same epochs and bytes.
type Gate struct {
	actors   int
	budget   int64 // snapshot rows per epoch, all actors together
	rows     atomic.Int64
	mu       sync.Mutex
	full     int // actors whose rows of this epoch are read
	finished int // actors whose scan ended, for good
	wake     chan struct{}
	// afterScans, when set, decides once every scan has ended (see SetAfterScans).
	afterScans func() (ready, final bool)
}

// SetAfterScans hands the cadence, once every actor's scan has ended, to f: a
// creating job that runs on after its snapshot (snapshot backfill replays the
// upstream's change log) says when the source may cut its next epoch and which is
// the last; it calls Wake when its answer may have changed. Without it, the epoch in
// which the last scan ends is the final one.
func (g *Gate) SetAfterScans(f func() (ready, final bool)) { g.afterScans = f }

// Wake makes the source ask the gate again.
func (g *Gate) Wake() { g.signal() }

// NewGate returns the gate of actors sharing rows snapshot rows per epoch.
func NewGate(actors int, rows int64) *Gate {
	return &Gate{actors: actors, budget: rows, wake: make(chan struct{}, 1)}
}

// Share is actor a's rows per epoch: the budget split as evenly as it goes.
func (g *Gate) Share(a int) int64 {
	n := g.budget / int64(g.actors)
	if int64(a) < g.budget%int64(g.actors) {
		n++
	}
	return max(n, 1)
}

func (g *Gate) signal() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// Emitted counts snapshot rows as an actor emits them.
func (g *Gate) Emitted(n int) {
	g.rows.Add(int64(n))
	g.signal()
}

// Full records that an actor read its share of the epoch.
func (g *Gate) Full() {
	g.mu.Lock()
	g.full++
	g.mu.Unlock()
	g.signal()
}

// Exhausted records that an actor's scan ended.
func (g *Gate) Exhausted() {
	g.mu.Lock()
	g.finished++
	g.mu.Unlock()
	g.signal()
}

// state reports whether every actor is done with the epoch, and whether every
// actor's scan has ended (the job's final epoch).
func (g *Gate) state() (ready, allFinished bool) {
	g.mu.Lock()
	ready, allFinished = g.full+g.finished >= g.actors, g.finished >= g.actors
	g.mu.Unlock()
	if allFinished && g.afterScans != nil {
		return g.afterScans()
	}
	return ready, allFinished
}

// progress is the share of the epoch's rows read so far, at most 1.
func (g *Gate) progress() float64 {
	return min(1, float64(g.rows.Load())/float64(g.budget))
}

// next starts a new epoch. The source calls it before it sends the barrier that
// ends the epoch, so no actor can report the next epoch full before it.
func (g *Gate) next() {
	g.mu.Lock()
	g.full = 0
	g.mu.Unlock()
	g.rows.Store(0)
}
