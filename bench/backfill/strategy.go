package backfill

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/backfill-bench/backfill-bench/bench/stream"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/scankind"
)

// Scan is a scan strategy: RisingWave's no-shuffle backfill (merged), arrangement
// backfill (per-vnode) and snapshot backfill (snapshot).
type Scan int

const (
	// Merged scans all of an actor's vnodes merged in pk order, with one position
	// (scan_merged.go).
	Merged Scan = iota
	// PerVnode scans each vnode on its own, interleaved, with a position per vnode
	// (scan_pervnode.go).
	PerVnode
	// Snapshot reads one committed snapshot per vnode, then replays the upstream's
	// change log, with barriers of its own (scan_snapshot.go).
	Snapshot
)

// Scans are the strategies' names, as ParseScan takes them: scankind.Kinds',
// whose index is the Scan.
var Scans = contract.Scans

func (s Scan) String() string { return Scans[s] }

// Kind is the strategy's entry in the table of scan kinds (its properties).
func (s Scan) Kind() scankind.Kind { return scankind.Kinds[s] }

// ParseScan returns the strategy named name.
func ParseScan(name string) (Scan, error) { return parseName[Scan](Scans, "scan", name) }

// parseName returns the value named name, its index in names; what says what it is.
func parseName[T ~int](names []string, what, name string) (T, error) {
	if i := slices.Index(names, name); i >= 0 {
		return T(i), nil
	}
	return 0, fmt.Errorf("unknown %s %q (have %s)", what, name, strings.Join(names, ", "))
}

// newStrategies are the constructors of the Scans' strategies, indexed by the Scan.
var newStrategies = [...]func(*Executor) strategy{
	Merged:   newMergedScan,
	PerVnode: newPerVnodeScan,
	Snapshot: newSnapshotScan,
}

// newStrategy returns the strategy of e's scan kind.
func newStrategy(e *Executor) (strategy, error) {
	if s := e.cfg.Scan; s < 0 || int(s) >= len(newStrategies) {
		return nil, fmt.Errorf("backfill: actor %d: scan %d has no strategy: add it to newStrategies (bench/backfill/strategy.go)", e.cfg.Actor, s)
	}
	return newStrategies[e.cfg.Scan](e), nil
}

// strategy is what differs between the scan kinds: how the scan is opened and what
// snapshot it reads, the progress it tracks and persists, what becomes of upstream
// chunks while it runs, and what a barrier does to it. The Executor does the rest
// (reading rows into chunks, materializing, handing epochs over) and calls these
// at fixed points; a strategy sets e.scan and e.snap to what it opens, which the
// Executor reads and closes.
type strategy interface {
	// resume restores the progress persisted in rs (one state per owned vnode;
	// keys are their positions' memcomparable encodings, nil for none) and sets
	// e.finished.
	resume(rs []VnodeState, keys [][]byte) error
	// start opens the scan when the job starts (unless it resumed finished).
	start() error
	// read records the scan's step: the row at key, ok, or the scan's end.
	read(key []byte, ok bool)
	// scanned is called after each step of the scan in the run loop.
	scanned() error
	// emitted records that chunk c of snapshot rows went downstream.
	emitted(c *stream.Chunk)
	// upstream sees each upstream chunk the actor buffers while the scan runs.
	upstream(c *stream.Chunk)
	// barrier does barrier b's work on the scan and on the buffered upstream
	// chunks, before the epoch's state is persisted; it may wait (ctx ends it).
	barrier(ctx context.Context, b *stream.Barrier) error
	// persist writes the state rows whose progress changed, at barrier b.
	persist(b *stream.Barrier) error
	// next readies the scan for the epoch barrier b begins, once b's part is
	// handed over.
	next(b *stream.Barrier) error
}
