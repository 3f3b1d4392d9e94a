package backfill

import (
	"context"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/backfill-bench/backfill-bench/bench/memcmp"
	"github.com/backfill-bench/backfill-bench/bench/ratelimit"
	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/scaniter"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/stream"
	"github.com/backfill-bench/backfill-bench/internal/extrawork"
)

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
	// WaitCommitted waits until an upstream epoch has committed (snapshot scan: a
	// replay reads the epoch's change log once it has).
	WaitCommitted func(ctx context.Context, epoch uint64) error
}

// Executor is one actor's backfill, with its materialize stage; its scan kind's
// strategy (strategy.go) does what differs by kind.
type Executor struct {
	cfg Config
	env Env

	strat strategy
	scan  scaniter.Scan          // the open scan (the strategy opens it)
	snap  *storage.EpochSnapshot // the snapshot it reads
	full  bool                   // the epoch's EpochRows are read: the scan waits for the barrier

	// When the current phase began: scanning, or full.
	scanFrom, fullAt time.Time

	buffer   []*stream.Chunk // upstream chunks received while the scan runs
	finished bool            // the snapshot scan has ended
	rows     []int64         // snapshot rows read per owned vnode

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
		snapChunk: stream.NewChunk(cfg.ChunkSize),
		snapSlab:  make([]row.Datum, 0, cfg.ChunkSize*cols),
		vnoder:    storage.NewVnoder(cfg.Schema, cfg.VnodeCount),
		limit:     ratelimit.NewLimiter(cfg.RateLimit, cfg.ChunkSize),
	}
	var err error
	if e.strat, err = newStrategy(e); err != nil {
		return nil, err
	}
	if err := e.resume(); err != nil {
		return nil, err
	}
	return e, nil
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
	return e.strat.resume(rs, keys)
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
		if err := e.strat.start(); err != nil {
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
		if wait := e.limit.WaitNow(); wait > 0 {
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
		if err := e.strat.scanned(); err != nil {
			return err
		}
	}
}

// closeScan drops the scan; rows it had not returned are read again by the next one.
func (e *Executor) closeScan() {
	if e.scan != nil {
		e.scan.Close()
		e.scan = nil
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
	e.strat.read(key, ok)
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
	e.snapVnode = append(e.snapVnode, e.vnodeIndex(key))
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
	e.strat.emitted(e.snapChunk)
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
		e.strat.upstream(c)
		return false, nil
	}
	return e.barrier(ctx, msg.Barrier)
}

// barrier ends the epoch: the strategy's work on the scan, the state rows, the
// part handed over, then the scan readied for the next epoch.
func (e *Executor) barrier(ctx context.Context, b *stream.Barrier) (done bool, err error) {
	start := time.Now()
	switch {
	case e.full:
		e.part.Phases.Idle = start.Sub(e.fullAt)
	case e.scan != nil && !e.scanFrom.IsZero():
		e.part.Phases.Scan = start.Sub(e.scanFrom)
	}
	if err := e.strat.barrier(ctx, b); err != nil {
		return false, err
	}
	if e.cfg.Persist {
		start := time.Now()
		if err := e.strat.persist(b); err != nil {
			return false, err
		}
		e.part.StateTime = time.Since(start)
	}
	if err := e.deliver(ctx, b, start); err != nil {
		return false, err
	}
	if b.Final {
		if !e.finished || b.Creating {
			return true, fmt.Errorf("backfill: actor %d: final barrier %d before the scan finished and the job joined its upstream", e.cfg.Actor, b.Epoch.Curr)
		}
		return true, nil
	}
	e.state = e.env.Store.DB.NewBatch()
	return false, e.strat.next(b)
}

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

// vnodeIndex returns the index in Vnodes of the vnode of A's key.
func (e *Executor) vnodeIndex(key []byte) int { return int(storage.KeyVnode(key) - e.cfg.Vnodes[0]) }

// putState writes st to the epoch's state rows.
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
	e.part.NetRows += e.writeChunk(&e.mv.upstream, storage.TableMV, c)
	return nil
}

// writeChunk adds the visible rows of c to w as writes to table t, and returns
// their inserts minus their deletes.
func (e *Executor) writeChunk(w *storage.Writes, t storage.TableID, c *stream.Chunk) (net int64) {
	for i, r := range c.Rows {
		if !c.Visible(i) {
			continue
		}
		e.keyBuf = storage.AppendRowKey(e.keyBuf[:0], t, e.vnoder.Of(r), e.cfg.Schema, r)
		if c.Ops[i].IsDelete() {
			w.Delete(e.keyBuf)
			net--
			continue
		}
		e.valBuf = row.AppendValue(e.valBuf[:0], r)
		w.Set(e.keyBuf, e.valBuf)
		net++
	}
	return net
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
