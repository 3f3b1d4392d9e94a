package backfill

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/backfill-bench/backfill-bench/bench/memcmp"
	"github.com/backfill-bench/backfill-bench/bench/ratelimit"
	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/scaniter"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/stream"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/scankind"
	"github.com/backfill-bench/backfill-bench/internal/extrawork"
)

// Scan is a scan strategy: RisingWave's no-shuffle backfill (merged), arrangement
// backfill (per-vnode) and snapshot backfill (snapshot).
type Scan int

const (
	// Merged scans all of an actor's vnodes merged in pk order, with one position.
	Merged Scan = iota
	// PerVnode scans each vnode on its own, interleaved, with a position per vnode.
	PerVnode
	// Snapshot reads one committed snapshot per vnode, then replays the upstream's
	// change log, with barriers of its own (snapshot.go).
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

// Read is what a scan reopened after a barrier reads (DESIGN §2.3, "Snapshot reads").
type Read int

const (
	// Uncommitted reads the epoch the barrier sealed without waiting for its commit:
	// the last committed snapshot overlaid with the sealed epochs' writes to A.
	Uncommitted Read = iota
	// Checkpoint reads the last checkpoint's snapshot merged with the upstream
	// changes the actor buffered since it.
	Checkpoint
)

// Reads are the read modes' names, as ParseRead takes them.
var Reads = []string{"uncommitted", "checkpoint"}

func (r Read) String() string { return Reads[r] }

// ParseRead returns the read mode named name.
func ParseRead(name string) (Read, error) { return parseName[Read](Reads, "read mode", name) }

// Config configures one backfill actor.
type Config struct {
	Actor      int
	Vnodes     []uint16 // the vnodes this actor owns, ascending and contiguous
	Schema     *row.Schema
	VnodeCount int
	ChunkSize  int
	Scan       Scan
	Read       Read
	Persist    bool    // write state rows at each barrier where progress changed
	RateLimit  float64 // snapshot rows/s for this actor; 0: unlimited; Paused: none read
	// EpochRows, when > 0, is how many snapshot rows the actor reads per epoch: it
	// stops there until the barrier (a work-driven cadence cuts epochs by rows).
	EpochRows int64
	// Resume is the persisted state of each of Vnodes, in order (a vnode without a
	// state row: Vnode set, the rest zero); nil starts from the beginning.
	Resume []VnodeState
	// Snapshot scan: rebuild the snapshot's iterators after RebuildRows rows or
	// RebuildInterval since they were opened (0: never by that measure).
	RebuildRows     int64
	RebuildInterval time.Duration
}

// Part is what an actor hands the barrier collector for one epoch.
type Part struct {
	Actor        int
	Barrier      *stream.Barrier
	MV           []*pebble.Batch // the epoch's MV rows: batches in key order, each sorted
	State        *pebble.Batch   // the epoch's state rows, in key order
	Finished     bool
	SnapshotRows int64         // snapshot rows emitted this epoch
	UpstreamRows int64         // upstream rows received this epoch
	MVBytes      int64         // logical key+value bytes written to B (one write per key)
	StateRows    int64         // state rows written
	StateBytes   int64         // logical key+value bytes written to the state table
	StateTime    time.Duration // spent building and encoding the state rows
	// Where the actor's time went in the epoch: reopening the scan, scanning,
	// waiting with its rows read (work-driven barriers), and handling the barrier
	// until the part was handed over.
	Phases  Phases
	NetRows int64 // visible inserts minus visible deletes sent downstream
	// The epoch's scan: how many epochs the snapshot it read was behind the epoch it
	// read (their writes overlaid), and the writes to A the actor buffered for
	// checkpoint reads when it opened.
	ReadLag  uint64
	Buffered int64
	// Snapshot scan: the part is of the creating job's own epoch (committed apart
	// from the upstream's), the upstream epoch whose change log it replayed (0:
	// none), and the iterator rebuilds in it.
	Creating bool
	Replayed uint64
	Rebuilds int
}

// Phases are an actor's time in one epoch, by what it was doing.
type Phases struct {
	Open, Scan, Idle, Barrier time.Duration
}

// Add sums two actors' phases.
func (p Phases) Add(q Phases) Phases {
	return Phases{p.Open + q.Open, p.Scan + q.Scan, p.Idle + q.Idle, p.Barrier + q.Barrier}
}

// Close releases the part's batches.
func (p Part) Close() {
	closeAll(p.MV)
	p.State.Close()
}

// Env is what an actor runs against.
type Env struct {
	Store       *storage.Store
	Input       <-chan stream.Message
	Deliver     func(context.Context, Part) error // hands a finished epoch to the collector
	OnExhausted func()                            // the snapshot scan has ended
	OnEmit      func(rows int)                    // a snapshot chunk of rows was emitted (nil: none)
	OnFull      func()                            // the actor read its EpochRows for the epoch (nil: none)
	// RateChange, if set, is asked at every barrier for a new snapshot rate limit,
	// which takes effect from the next epoch (the engine's Throttle mutation rides
	// on a barrier).
	RateChange func() (rate float64, ok bool)
	// OnChunk sees each snapshot chunk as it is emitted downstream, before OnEmit
	// (nil: none); it must not keep the chunk. The pipeline's progress check
	// derives the positions it expects from these rows, not from the executor.
	OnChunk func(c *stream.Chunk)
}

// Executor is one actor's merged-scan backfill, with its materialize stage.
type Executor struct {
	cfg Config
	env Env

	scan  rowScan
	vscan *scaniter.VnodeIter // scan, when per-vnode
	snap  *storage.EpochSnapshot
	full  bool // the epoch's EpochRows are read: the scan waits for the barrier

	// When the current phase began: scanning, or full.
	scanFrom, fullAt time.Time
	buffer           []*stream.Chunk

	// The writes the scan overlays on its snapshot, when they are a merge of several
	// epochs'. Read mode checkpoint: the writes to A of the upstream changes
	// received since the last checkpoint, per epoch, and those of the current one.
	overlay   storage.Writes
	sinceCkpt []bufferedEpoch
	epochToA  *storage.Writes

	pos      []row.Datum // merged: last emitted pk; nil before the first row
	posKey   []byte      // merged: memcomparable encoding of pos
	finished bool
	rows     []int64 // snapshot rows read per owned vnode

	// Per-vnode scan: each owned vnode's last emitted pk (nil: not started), whether
	// it is completed, and whether either changed since it was last persisted.
	vposKey [][]byte
	vdone   []bool
	vdirty  []bool

	// Snapshot scan: when its iterators were opened, and the upstream epoch its MV
	// holds (the snapshot's, then each replayed one's).
	openedAt  time.Time
	sinceOpen int64 // rows since
	dataEpoch uint64

	persistedKey      []byte
	persistedFinished bool
	persistedAny      bool

	snapChunk *stream.Chunk
	snapSlab  []row.Datum
	snapVnode []int // index into rows of each snapshot chunk row

	mv     *epochWrites
	state  *pebble.Batch
	part   Part
	limit  *ratelimit.Limiter // the snapshot rate limit, kept across scan reopens
	vnoder *storage.Vnoder
	keyBuf []byte
	valBuf []byte
}

// NewExecutor returns an actor ready to Run.
func NewExecutor(cfg Config, env Env) (*Executor, error) {
	if len(cfg.Vnodes) == 0 || cfg.ChunkSize <= 0 || cfg.Schema == nil {
		return nil, fmt.Errorf("backfill: actor %d: bad config (vnodes %d, chunk size %d)", cfg.Actor, len(cfg.Vnodes), cfg.ChunkSize)
	}
	cols := len(cfg.Schema.Columns)
	n := len(cfg.Vnodes)
	if int(cfg.Vnodes[n-1]-cfg.Vnodes[0]) != n-1 {
		return nil, fmt.Errorf("backfill: actor %d: vnodes %d..%d are not contiguous", cfg.Actor, cfg.Vnodes[0], cfg.Vnodes[n-1])
	}
	e := &Executor{
		cfg:       cfg,
		env:       env,
		rows:      make([]int64, n),
		vposKey:   make([][]byte, n),
		vdone:     make([]bool, n),
		vdirty:    make([]bool, n),
		snapChunk: stream.NewChunk(cfg.ChunkSize),
		snapSlab:  make([]row.Datum, 0, cfg.ChunkSize*cols),
		vnoder:    storage.NewVnoder(cfg.Schema, cfg.VnodeCount),
		limit:     ratelimit.NewLimiter(cfg.RateLimit, cfg.ChunkSize),
	}
	if err := e.resume(); err != nil {
		return nil, err
	}
	return e, nil
}

// bufferedEpoch is one epoch's upstream changes as writes to A, sorted.
type bufferedEpoch struct {
	epoch  uint64
	writes *storage.Writes
}

// rowScan is a snapshot scan: MergeIter or VnodeIter.
type rowScan interface {
	Next() (key, value []byte, ok bool)
	Err() error
	Close() error
}

// resume restores the progress persisted in cfg.Resume.
func (e *Executor) resume() error {
	rs := e.cfg.Resume
	if rs == nil {
		return nil
	}
	if len(rs) != len(e.cfg.Vnodes) {
		return fmt.Errorf("backfill: actor %d: %d resume states for %d vnodes", e.cfg.Actor, len(rs), len(e.cfg.Vnodes))
	}
	desc := e.cfg.Schema.PKDesc
	keys := make([][]byte, len(rs))
	for i, st := range rs {
		if st.Vnode != e.cfg.Vnodes[i] {
			return fmt.Errorf("backfill: actor %d: resume state %d is of vnode %d, want %d", e.cfg.Actor, i, st.Vnode, e.cfg.Vnodes[i])
		}
		if st.Pos != nil {
			keys[i] = memcmp.AppendKey(nil, st.Pos, desc)
		}
		e.rows[i] = st.RowCount
	}
	if e.cfg.Scan != Merged {
		e.finished = true
		for i, st := range rs {
			e.vposKey[i], e.vdone[i] = keys[i], st.Finished
			e.finished = e.finished && st.Finished
		}
		return nil
	}
	// One position describes a merged-scan actor, so its vnodes must agree: they do
	// when the job resumes with the par it ran with, or with a par that splits each
	// old actor's vnodes further, or when all are finished (positions no longer
	// matter).
	for i, st := range rs[1:] {
		if st.Finished != rs[0].Finished || !st.Finished && !bytes.Equal(keys[i+1], keys[0]) {
			return fmt.Errorf("backfill: actor %d: vnode %d (pos %v, finished %v) and vnode %d (pos %v, finished %v) were persisted with different progress, and the merged scan keeps one position per actor: resume with the par the job ran with (or one that splits its actors), or use scan=per-vnode",
				e.cfg.Actor, rs[0].Vnode, row.Row(rs[0].Pos), rs[0].Finished, st.Vnode, row.Row(st.Pos), st.Finished)
		}
	}
	e.pos, e.posKey, e.finished = rs[0].Pos, keys[0], rs[0].Finished
	if e.pos != nil || e.finished {
		// A copy: posKey's array is reused as the scan advances.
		e.persistedKey, e.persistedFinished, e.persistedAny = bytes.Clone(keys[0]), e.finished, true
	}
	return nil
}

// Run processes the actor's input until the final barrier's epoch is delivered.
func (e *Executor) Run(ctx context.Context) error {
	defer e.closeScan()
	e.mv = newEpochWrites(e.env.Store.DB, e.cfg.Vnodes)
	defer e.mv.close()
	e.state = e.env.Store.DB.NewBatch()
	defer func() {
		if e.state != nil {
			e.state.Close()
		}
	}()
	if e.finished { // resumed after the scan had ended
		if e.env.OnExhausted != nil {
			e.env.OnExhausted()
		}
	} else {
		if e.cfg.Read == Checkpoint && e.cfg.Scan != Snapshot {
			e.epochToA = &storage.Writes{}
		}
		if err := e.openScan(e.env.Store.Committed()); err != nil {
			return err
		}
	}
	e.scanFrom = time.Now()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if e.finished || e.full {
			select {
			case msg := <-e.env.Input:
				if done, err := e.handle(ctx, msg); done || err != nil {
					return err
				}
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		// Scanning: always prefer upstream, so a barrier is seen as soon as it comes.
		if len(e.env.Input) > 0 {
			if done, err := e.handle(ctx, <-e.env.Input); done || err != nil {
				return err
			}
			continue
		}
		if wait := e.limit.Wait(time.Now()); wait > 0 {
			timer.Reset(wait)
			select {
			case msg := <-e.env.Input:
				if done, err := e.handle(ctx, msg); done || err != nil {
					return err
				}
			case <-timer.C:
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		if err := e.scanOne(); err != nil {
			return err
		}
		if e.cfg.Scan == Snapshot {
			if err := e.maybeRebuild(); err != nil {
				return err
			}
		}
	}
}

// openScan opens the scan of A at epoch after the position, as the read mode sees it.
func (e *Executor) openScan(epoch uint64) error {
	if e.cfg.Scan == Snapshot {
		return e.openSnapshot()
	}
	e.closeScan()
	var ov *storage.Writes
	e.snap, ov = e.readView(epoch)
	var err error
	if e.cfg.Scan == PerVnode {
		e.vscan, err = scaniter.NewVnodeIter(e.snap.Snap, ov, storage.TableUpstream, e.cfg.Vnodes, e.vposKey, e.vdone)
		if err == nil {
			e.scan = e.vscan
			e.markCompleted()
		}
	} else {
		e.scan, err = scaniter.NewMergeIter(e.snap.Snap, ov, storage.TableUpstream, e.cfg.Vnodes, e.posKey)
	}
	if err != nil {
		return fmt.Errorf("backfill: actor %d: open scan at epoch %d (%s read of snapshot %d): %w", e.cfg.Actor, epoch, e.cfg.Read, e.snap.Epoch, err)
	}
	e.part.ReadLag = epoch - e.snap.Epoch
	for _, b := range e.sinceCkpt {
		e.part.Buffered += int64(b.writes.Len())
	}
	return nil
}

// readView returns the snapshot (which closeScan releases) and the writes overlaid
// on it that together are A at epoch, as the read mode sees it: uncommitted, the
// latest commit and the epochs sealed since; checkpoint, the latest checkpoint and
// the changes this actor received since, which are all of them for its vnodes.
func (e *Executor) readView(epoch uint64) (*storage.EpochSnapshot, *storage.Writes) {
	if e.cfg.Read == Uncommitted {
		snap, sealed := e.env.Store.ReadUncommitted(epoch)
		return snap, e.merge(sealed)
	}
	snap := e.env.Store.LatestCheckpoint()
	n := 0
	for n < len(e.sinceCkpt) && e.sinceCkpt[n].epoch <= snap.Epoch {
		n++
	}
	e.sinceCkpt = slices.Delete(e.sinceCkpt, 0, n)
	ws := make([]*storage.Writes, len(e.sinceCkpt))
	for i, b := range e.sinceCkpt {
		ws[i] = b.writes
	}
	return snap, e.merge(ws)
}

// merge returns the writes of the epochs ws (oldest first) to this actor's vnodes of
// A as one sorted overlay, the later write of a key winning; one epoch's are used as
// they are.
func (e *Executor) merge(ws []*storage.Writes) *storage.Writes {
	switch len(ws) {
	case 0:
		return nil
	case 1:
		return ws[0]
	}
	lo, _ := storage.VnodeBounds(storage.TableUpstream, e.cfg.Vnodes[0])
	_, hi := storage.VnodeBounds(storage.TableUpstream, e.cfg.Vnodes[len(e.cfg.Vnodes)-1])
	e.overlay.Reset()
	for _, w := range ws {
		e.overlay.Append(w, w.Search(lo), w.Search(hi))
	}
	e.overlay.Sort()
	return &e.overlay
}

// markCompleted records the vnodes whose per-vnode scan has ended.
func (e *Executor) markCompleted() {
	for _, i := range e.vscan.Exhausted() {
		e.vdone[i], e.vdirty[i] = true, true
	}
}

// closeScan drops the scan; rows it had not returned are read again by the next one.
func (e *Executor) closeScan() {
	if e.scan != nil {
		e.scan.Close()
		e.scan, e.vscan = nil, nil
	}
	if e.snap != nil {
		e.snap.Release()
		e.snap = nil
	}
}

// scanOne reads one snapshot row into the snapshot chunk, emitting the chunk when it
// is full, or ends the scan.
func (e *Executor) scanOne() error {
	key, val, ok := e.scan.Next()
	if e.vscan != nil {
		e.markCompleted()
	}
	if !ok {
		if err := e.scan.Err(); err != nil {
			return fmt.Errorf("backfill: actor %d: scan: %w", e.cfg.Actor, err)
		}
		return e.exhaust()
	}
	start := len(e.snapSlab)
	slab, err := row.DecodeValue(e.snapSlab[start:start:cap(e.snapSlab)], val)
	if err != nil {
		return fmt.Errorf("backfill: actor %d: key %x: %w", e.cfg.Actor, key, err)
	}
	if len(slab) > cap(e.snapSlab)-start { // the row did not fit: give the chunk its own slab
		e.snapSlab = append(e.snapSlab[:start], slab...)
	} else {
		e.snapSlab = e.snapSlab[:start+len(slab)]
	}
	e.snapChunk.Append(stream.Insert, row.Row(e.snapSlab[start:len(e.snapSlab):len(e.snapSlab)]))
	vi := int(storage.KeyVnode(key) - e.cfg.Vnodes[0])
	e.snapVnode = append(e.snapVnode, vi)
	if e.vscan != nil {
		// The chunk is emitted before anything reads a position, so the vnode's
		// position can move with the row.
		e.vposKey[vi] = append(e.vposKey[vi][:0], key[storage.PrefixLen:]...)
		e.vdirty[vi] = true
	}
	if e.limit.Limited() {
		e.limit.Take(time.Now())
	}
	e.part.SnapshotRows++
	extrawork.Row()
	if e.cfg.EpochRows > 0 && e.part.SnapshotRows >= e.cfg.EpochRows {
		// The epoch's rows are read: emit them, so the position is the one the
		// barrier will filter by, and wait for the barrier.
		if err := e.emitSnapshotChunk(); err != nil {
			return err
		}
		e.full, e.fullAt = true, time.Now()
		e.part.Phases.Scan = e.fullAt.Sub(e.scanFrom)
		if e.env.OnFull != nil {
			e.env.OnFull()
		}
		return nil
	}
	if e.snapChunk.Len() >= e.cfg.ChunkSize {
		return e.emitSnapshotChunk()
	}
	return nil
}

// emitSnapshotChunk materializes the snapshot chunk and advances the position to its
// last row.
func (e *Executor) emitSnapshotChunk() error {
	n := e.snapChunk.Len()
	if n == 0 {
		return nil
	}
	if err := e.materializeSnapshot(); err != nil {
		return err
	}
	for _, v := range e.snapVnode {
		e.rows[v]++
	}
	if e.env.OnChunk != nil {
		e.env.OnChunk(e.snapChunk)
	}
	if e.env.OnEmit != nil {
		e.env.OnEmit(n)
	}
	if e.cfg.Scan == Merged {
		e.pos = e.cfg.Schema.PKOf(e.pos[:0], e.snapChunk.Rows[n-1])
		e.posKey = memcmp.AppendKey(e.posKey[:0], e.pos, e.cfg.Schema.PKDesc)
	}
	e.snapChunk.Ops, e.snapChunk.Rows = e.snapChunk.Ops[:0], e.snapChunk.Rows[:0]
	e.snapSlab, e.snapVnode = e.snapSlab[:0], e.snapVnode[:0]
	return nil
}

// exhaust ends the snapshot scan: buffered upstream goes out unfiltered, and from now
// on upstream is forwarded as it comes.
func (e *Executor) exhaust() error {
	if err := e.emitSnapshotChunk(); err != nil {
		return err
	}
	for _, c := range e.buffer {
		if err := e.materialize(c); err != nil {
			return err
		}
	}
	e.buffer = e.buffer[:0]
	e.finished = true
	e.closeScan()
	if !e.scanFrom.IsZero() { // the epoch's scan phase ends here, not at its barrier
		e.part.Phases.Scan, e.scanFrom = time.Since(e.scanFrom), time.Time{}
	}
	if e.env.OnExhausted != nil {
		e.env.OnExhausted()
	}
	return nil
}

func (e *Executor) handle(ctx context.Context, msg stream.Message) (done bool, err error) {
	if c := msg.Chunk; c != nil {
		e.part.UpstreamRows += int64(c.Len())
		if e.finished {
			return false, e.materialize(c)
		}
		e.buffer = append(e.buffer, c)
		if e.epochToA != nil {
			e.bufferToA(c)
		}
		return false, nil
	}
	if e.cfg.Scan == Snapshot {
		return e.snapshotBarrier(ctx, msg.Barrier)
	}
	return e.barrier(ctx, msg.Barrier)
}

// bufferToA records upstream chunk c, all of it, as writes to A, for checkpoint
// reads.
func (e *Executor) bufferToA(c *stream.Chunk) {
	s := e.cfg.Schema
	for i, r := range c.Rows {
		e.keyBuf = storage.AppendRowKey(e.keyBuf[:0], storage.TableUpstream, e.vnoder.Of(r), s, r)
		if c.Ops[i].IsDelete() {
			e.epochToA.Delete(e.keyBuf)
			continue
		}
		e.valBuf = row.AppendValue(e.valBuf[:0], r)
		e.epochToA.Set(e.keyBuf, e.valBuf)
	}
}

func (e *Executor) barrier(ctx context.Context, b *stream.Barrier) (done bool, err error) {
	start := time.Now()
	switch {
	case e.full:
		e.part.Phases.Idle = start.Sub(e.fullAt)
	case e.scan != nil && !e.scanFrom.IsZero():
		e.part.Phases.Scan = start.Sub(e.scanFrom)
	}
	if e.scan != nil && !e.finished && e.part.SnapshotRows == 0 && !e.limit.Paused() {
		// Read at least one row per epoch, so progress never starves on short barriers.
		if err := e.scanOne(); err != nil {
			return false, err
		}
	}
	if e.epochToA != nil && e.epochToA.Len() > 0 {
		e.epochToA.Sort()
		e.sinceCkpt = append(e.sinceCkpt, bufferedEpoch{b.Epoch.Curr, e.epochToA})
		e.epochToA = &storage.Writes{}
	}
	if !e.finished {
		if err := e.emitSnapshotChunk(); err != nil {
			return false, err
		}
		for _, c := range e.buffer {
			if e.cfg.Scan == PerVnode {
				e.filterPerVnode(c)
			} else {
				FilterUpTo(c, e.cfg.Schema, e.pos)
			}
			if err := e.materialize(c); err != nil {
				return false, err
			}
		}
		e.buffer = e.buffer[:0]
	}
	if e.cfg.Persist {
		start := time.Now()
		if err := e.persist(); err != nil {
			return false, err
		}
		e.part.StateTime = time.Since(start)
	}
	if err := e.deliver(ctx, b, start); err != nil {
		return false, err
	}
	if b.Final {
		if !e.finished {
			return true, fmt.Errorf("backfill: actor %d: final barrier %d before the scan finished", e.cfg.Actor, b.Epoch.Curr)
		}
		return true, nil
	}
	e.state = e.env.Store.DB.NewBatch()
	if e.finished {
		e.sinceCkpt, e.epochToA = nil, nil // nothing reads A any more
		return false, nil
	}
	// The next scan reads the epoch this barrier ends, without waiting for its commit.
	opened := time.Now()
	if err := e.openScan(b.Epoch.Curr); err != nil {
		return false, err
	}
	e.scanFrom = time.Now()
	e.part.Phases.Open = e.scanFrom.Sub(opened)
	return false, nil
}

// filterPerVnode keeps visible the rows of c that the per-vnode scan has passed, by
// the state of each row's vnode: all of a completed vnode, none of a vnode not
// started, pk ≤ position otherwise.
// deliver hands the epoch's part, ended by barrier b (handled since start), to the
// collector, and takes up a new rate limit for the next epoch.
func (e *Executor) deliver(ctx context.Context, b *stream.Barrier, start time.Time) error {
	mv, mvBytes, err := e.mv.runs()
	if err != nil {
		return fmt.Errorf("backfill: actor %d: epoch %d: %w", e.cfg.Actor, b.Epoch.Curr, err)
	}
	e.part.MVBytes = mvBytes
	e.part.Actor, e.part.Barrier, e.part.MV, e.part.State, e.part.Finished = e.cfg.Actor, b, mv, e.state, e.finished
	e.part.Creating, e.part.Replayed = b.Creating, b.Replay
	e.state = nil
	if e.env.RateChange != nil { // a new limit takes effect from the next epoch
		if rate, ok := e.env.RateChange(); ok && rate != e.limit.Rate() {
			e.limit.Set(rate, time.Now())
		}
	}
	e.part.Phases.Barrier = time.Since(start)
	if err := e.env.Deliver(ctx, e.part); err != nil {
		return err
	}
	e.part, e.full = Part{}, false
	return nil
}

func (e *Executor) filterPerVnode(c *stream.Chunk) {
	if c.Vis == nil {
		c.Vis = stream.NewBitmap(c.Len(), true)
	}
	for i, r := range c.Rows {
		if !c.Vis.Get(i) {
			continue
		}
		v := e.vnoder.Of(r)
		vi := int(v - e.cfg.Vnodes[0])
		if e.vdone[vi] {
			continue
		}
		pos := e.vposKey[vi]
		e.keyBuf = storage.AppendRowKey(e.keyBuf[:0], storage.TableUpstream, v, e.cfg.Schema, r)
		if pos == nil || bytes.Compare(e.keyBuf[storage.PrefixLen:], pos) > 0 {
			c.Vis.Set(i, false)
		}
	}
	fixSplitUpdates(c)
}

// persist writes the state rows whose progress changed since they were last
// written, in the epoch's batch, so state and MV rows commit together.
func (e *Executor) persist() error {
	if e.cfg.Scan != Merged {
		return e.persistPerVnode()
	}
	if e.pos == nil && !e.finished {
		return nil
	}
	if e.persistedAny && e.persistedFinished == e.finished && bytes.Equal(e.persistedKey, e.posKey) {
		return nil
	}
	for i, v := range e.cfg.Vnodes {
		if err := e.putState(VnodeState{Vnode: v, Pos: e.pos, Finished: e.finished, RowCount: e.rows[i]}); err != nil {
			return err
		}
	}
	e.persistedKey = append(e.persistedKey[:0], e.posKey...)
	e.persistedFinished, e.persistedAny = e.finished, true
	return nil
}

// persistPerVnode writes a state row for each vnode whose progress changed.
func (e *Executor) persistPerVnode() error {
	s := e.cfg.Schema
	var pos []row.Datum
	for i, v := range e.cfg.Vnodes {
		if !e.vdirty[i] {
			continue
		}
		e.vdirty[i] = false
		pos = pos[:0]
		if k := e.vposKey[i]; k != nil {
			var err error
			if pos, _, err = memcmp.DecodeKey(pos, k, len(s.PK), s.PKDesc); err != nil {
				return fmt.Errorf("backfill: actor %d: vnode %d position %x: %w", e.cfg.Actor, v, k, err)
			}
		} else {
			pos = nil
		}
		if err := e.putState(VnodeState{Vnode: v, Pos: pos, Finished: e.vdone[i], RowCount: e.rows[i]}); err != nil {
			return err
		}
	}
	return nil
}

func (e *Executor) putState(st VnodeState) error {
	e.keyBuf = AppendStateKey(e.keyBuf[:0], st.Vnode)
	e.valBuf = AppendStateValue(e.valBuf[:0], st, len(e.cfg.Schema.PK))
	if err := e.state.Set(e.keyBuf, e.valBuf, nil); err != nil {
		return err
	}
	e.part.StateRows++
	e.part.StateBytes += int64(len(e.keyBuf) + len(e.valBuf))
	return nil
}

// materialize applies the visible rows of upstream chunk c to B in the epoch's
// writes. B is keyed by pk, so a row emitted twice would not show in B itself;
// NetRows counts the changelog as a downstream aggregate would, which the pipeline
// checks against |A|.
func (e *Executor) materialize(c *stream.Chunk) error {
	s := e.cfg.Schema
	for i, r := range c.Rows {
		if !c.Visible(i) {
			continue
		}
		e.keyBuf = storage.AppendRowKey(e.keyBuf[:0], storage.TableMV, e.vnoder.Of(r), s, r)
		if c.Ops[i].IsDelete() {
			e.mv.upstream.Delete(e.keyBuf)
			e.part.NetRows--
			continue
		}
		e.valBuf = row.AppendValue(e.valBuf[:0], r)
		e.mv.upstream.Set(e.keyBuf, e.valBuf)
		e.part.NetRows++
	}
	return nil
}

// materializeSnapshot applies the snapshot chunk, all inserts, to B in the epoch's
// writes; the scan recorded each row's vnode.
func (e *Executor) materializeSnapshot() error {
	s := e.cfg.Schema
	for i, r := range e.snapChunk.Rows {
		vi := e.snapVnode[i]
		e.keyBuf = storage.AppendRowKey(e.keyBuf[:0], storage.TableMV, e.cfg.Vnodes[vi], s, r)
		e.valBuf = row.AppendValue(e.valBuf[:0], r)
		if err := e.mv.snapshotSet(vi, e.keyBuf, e.valBuf); err != nil {
			return err
		}
	}
	e.part.NetRows += int64(e.snapChunk.Len())
	return nil
}
