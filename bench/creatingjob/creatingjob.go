// Package creatingjob controls a snapshot backfill's creating job: its phases, the
// taps that log the upstream, and the barriers its actors get.
package creatingjob

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/backfill-bench/backfill-bench/bench/backfill"
	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/stream"
)

// Job is snapshot backfill's control: what the engine's meta and the creating job's
// upstream buffer do (README "Snapshot backfill" names the engine's files).
//
//   - The upstream runs its own barriers: an upstream epoch commits once the source
//     and the taps have handed it in, without waiting for the creating job. Each tap
//     stands for the dispatcher between the upstream and one backfill actor: it
//     writes the upstream's change log (the log table, in the upstream's epoch
//     batch) and, until the job joins, passes the actor only barriers.
//   - Snapshot phase: every upstream barrier injects a creating-job barrier at the
//     same instant, with the creating job's own epoch (the engine's fake epochs);
//     its parts commit in creating epochs of their own. The lag is not limited.
//   - Log phase: once every actor has read its snapshot, the creating job replays
//     the upstream epochs sealed since, one per barrier. Every sealed epoch's
//     barrier goes out at once (up to maxInFlight), committed or not, as the
//     engine's meta injects every pending upstream barrier into the creating job
//     (status.rs: pending_upstream_barriers, drain_pending_barriers); an actor waits
//     for its epoch's commit before it reads the epoch's log (WaitCommitted), as the
//     engine's log read waits for the committed epoch. Work-driven, in batches
//     (every epoch committed when the last batch has committed), the upstream
//     cutting its allowance between them, so that every run commits the same
//     epochs in the same order and the bytes repeat. The upstream may go on while
//     its lag (upstream epochs sealed that the MV does not hold) is below a limit
//     that starts at the lag when the phase begins and shrinks by half an epoch per
//     epoch replayed, so the upstream advances at most one epoch for two replayed
//     and the creating job catches up (the engine's max_pending_epoch_lag). Held
//     back, the upstream stalls: the tap stops reading (time-driven), or the gate
//     does not cut (work-driven: the upstream uses its allowance between batches,
//     and the next batch waits for it).
//   - Caught up (lag 0), the job joins: from the next upstream epoch on the actors
//     get the upstream's chunks and barriers, and that epoch, the job's last,
//     commits with their parts, as a finished backfill's does.
type Job struct {
	par      int
	gated    bool   // work-driven cadence
	ckptFreq uint64 // checkpoint frequency, for replayed epochs
	wakeGate func()
	finish   chan struct{} // closed at the join (time-driven cadence: the next epoch is the last)

	mu       sync.Mutex
	cond     *sync.Cond
	phase    int
	snapshot uint64 // the upstream epoch the snapshot is of
	seq      uint64 // creating epochs injected
	made     map[uint64]*madeBarrier
	boxes    []*mailbox
	sealed   uint64 // the last upstream barrier any tap passed
	// Log phase: the epoch the MV holds, the lag limit in half epochs, the last
	// upstream epoch a replay barrier was sent for, the last upstream epoch the
	// limit lets through, and (work-driven) the epochs the source has cut.
	dataEpoch        uint64
	lim2             int64
	sentTo           uint64
	cutLimit, cut    uint64
	committed        uint64 // the last upstream epoch committed
	joinFrom         uint64 // the first coupled upstream epoch (phase joined)
	finalCut, closed bool

	lags map[uint64]int64 // the lag of each creating epoch

	// The collector's: creating parts by creating epoch, and the next to commit.
	parts map[uint64][]backfill.Part
	next  uint64
}

// maxInFlight is how many replay barriers may be out at once: the engine's
// in_flight_barrier_nums (10 000 by default, src/common/src/config/streaming.rs),
// which bounds a creating job's pending barriers (creating_job/mod.rs).
const maxInFlight = 10000

const (
	phaseSnapshot = iota
	phaseLog
	phaseJoined
)

type madeBarrier struct {
	b     *stream.Barrier
	taken int
}

// New returns the control of a creating job of par actors whose snapshot is of
// upstream epoch snapshot; gated: the cadence is work-driven.
func New(par int, snapshot uint64, gated bool, ckptFreq int) *Job {
	cj := &Job{
		par: par, gated: gated, ckptFreq: uint64(max(ckptFreq, 1)), finish: make(chan struct{}),
		snapshot: snapshot, made: map[uint64]*madeBarrier{}, sealed: snapshot,
		dataEpoch: snapshot, committed: snapshot, sentTo: snapshot,
		parts: map[uint64][]backfill.Part{}, next: 1, lags: map[uint64]int64{},
	}
	cj.cond = sync.NewCond(&cj.mu)
	for range par {
		cj.boxes = append(cj.boxes, newMailbox())
	}
	return cj
}

// AfterScans is the gate's cadence once every snapshot scan has ended
// (work-driven): one more epoch to carry the actors' finished parts, then what the
// log phase allows, then the final epoch at the join.
func (cj *Job) AfterScans() (ready, final bool) {
	cj.mu.Lock()
	defer cj.mu.Unlock()
	switch cj.phase {
	case phaseSnapshot:
		if cj.cut == 0 { // marks the one epoch cut after the scans ended
			cj.cut = 1
			return true, false
		}
		return false, false
	case phaseLog:
		if cj.cut < cj.cutLimit && cj.sentTo == cj.dataEpoch { // between batches
			cj.cut++
			return true, false
		}
		return false, false
	}
	if !cj.finalCut {
		cj.finalCut = true
		return true, true
	}
	return false, true
}

// LogPart is a tap's change log of one upstream epoch, for the epoch's batch.
type LogPart struct {
	Actor int
	Epoch uint64
	Batch *pebble.Batch
	Bytes int64
	Rows  int64
}

// tap stands between the router and actor a: it writes the change log of what the
// upstream sends the actor and, until the join, hands the actor only its creating
// barriers; from the join on, everything.
func (cj *Job) tap(ctx context.Context, a int, db *pebble.DB, schema *row.Schema, vnodes int, in <-chan stream.Message, deliver func(context.Context, LogPart) error) error {
	vnoder := storage.NewVnoder(schema, vnodes)
	w := &storage.Writes{}
	var held []*stream.Chunk
	var seq uint32
	var rows int64
	var key, val []byte
	epoch := cj.snapshot + 1
	box := cj.boxes[a]
	for {
		var msg stream.Message
		select {
		case msg = <-in:
		case <-ctx.Done():
			return nil
		}
		if c := msg.Chunk; c != nil {
			for i, r := range c.Rows {
				key = storage.AppendLogKey(key[:0], epoch, vnoder.Of(r), seq)
				val = stream.AppendLogValue(val[:0], c.Ops[i], r)
				w.Set(key, val)
				seq++
			}
			rows += int64(c.Len())
			cj.mu.Lock()
			if cj.coupled(epoch) {
				for _, h := range held {
					box.push(stream.Message{Chunk: h})
				}
				held = held[:0]
				box.push(stream.Message{Chunk: c})
			} else {
				held = append(held, c)
			}
			cj.mu.Unlock()
			continue
		}
		b := msg.Barrier
		if b.Epoch.Curr != epoch {
			return fmt.Errorf("tap %d: barrier of epoch %d in epoch %d", a, b.Epoch.Curr, epoch)
		}
		w.Sort()
		batch := db.NewBatchWithSize(w.BatchSize())
		n, err := w.PutAll(batch)
		if err != nil {
			batch.Close()
			return fmt.Errorf("tap %d: change log of epoch %d: %w", a, epoch, err)
		}
		if err := deliver(ctx, LogPart{Actor: a, Epoch: epoch, Batch: batch, Bytes: n, Rows: rows}); err != nil {
			return err
		}
		w, seq, rows = &storage.Writes{}, 0, 0
		cj.mu.Lock()
		switch {
		case cj.coupled(epoch):
			for _, h := range held {
				box.push(stream.Message{Chunk: h})
			}
			box.push(stream.Message{Barrier: b})
		case cj.phase == phaseSnapshot || cj.made[epoch] != nil:
			// Another tap made it before the log phase began: every actor gets it.
			box.push(stream.Message{Barrier: cj.creatingFor(b)})
		}
		held = held[:0]
		cj.sealed = max(cj.sealed, epoch)
		cj.dispatch() // its replay, or one that waited for this barrier to be passed on
		// Held back: the engine's upstream buffer stops polling, and the upstream
		// stalls behind it (time-driven; work-driven, the gate does not cut).
		for !cj.gated && cj.phase == phaseLog && epoch >= cj.cutLimit && ctx.Err() == nil {
			cj.cond.Wait()
		}
		cj.mu.Unlock()
		if b.Final {
			return nil
		}
		epoch++
	}
}

// coupled reports whether the actors get upstream epoch e itself (cj.mu held).
func (cj *Job) coupled(e uint64) bool { return cj.phase == phaseJoined && e >= cj.joinFrom }

// creatingFor returns the creating-job barrier injected with upstream barrier b
// (cj.mu held).
func (cj *Job) creatingFor(b *stream.Barrier) *stream.Barrier {
	m := cj.made[b.Epoch.Curr]
	if m == nil {
		cj.seq++
		cb := &stream.Barrier{Epoch: stream.Epoch{Prev: cj.seq - 1, Curr: cj.seq}, Injected: b.Injected, Checkpoint: b.Checkpoint, Creating: true}
		m = &madeBarrier{b: cb}
		cj.made[b.Epoch.Curr] = m
		cj.lags[cj.seq] = int64(b.Epoch.Curr - cj.snapshot)
	}
	if m.taken++; m.taken == cj.par {
		delete(cj.made, b.Epoch.Curr)
	}
	return m.b
}

// UpstreamCommitted is the collector's: upstream epoch e has committed.
func (cj *Job) UpstreamCommitted(e uint64) {
	cj.mu.Lock()
	defer cj.mu.Unlock()
	defer cj.cond.Broadcast() // for WaitCommitted
	cj.committed = e
	// Its taps have all handed in its log, some perhaps not yet marked it passed:
	// the join must not make it coupled.
	cj.sealed = max(cj.sealed, e)
	cj.dispatch()
}

// dispatch sends a replay barrier for every sealed epoch not yet sent (work
// driven: every committed one, once the last batch has committed and the upstream
// has used its allowance), or joins once the creating job has caught up (cj.mu
// held).
func (cj *Job) dispatch() {
	// A creating barrier of the snapshot phase that some tap has not passed on yet
	// goes first: a replay's barrier sent now would reach that tap's actor before it,
	// out of epoch order.
	if cj.phase != phaseLog || len(cj.made) > 0 {
		return
	}
	out := cj.sentTo > cj.dataEpoch
	if cj.gated && (out || cj.committed < max(cj.cut, cj.cutLimit)) {
		return
	}
	if !out && cj.dataEpoch >= cj.sealed {
		if cj.committed >= cj.sealed && (!cj.gated || cj.cut >= cj.cutLimit) {
			cj.join()
		}
		return
	}
	now := time.Now()
	for u := cj.sentTo + 1; u <= cj.sealed && u-cj.dataEpoch <= maxInFlight; u++ {
		cj.seq++
		b := &stream.Barrier{Epoch: stream.Epoch{Prev: cj.seq - 1, Curr: cj.seq}, Injected: now, Checkpoint: u%cj.ckptFreq == 0, Creating: true, Replay: u}
		for _, box := range cj.boxes {
			box.push(stream.Message{Barrier: b})
		}
		cj.sentTo = u
	}
}

// join couples the creating job to the upstream from the next upstream epoch on
// (cj.mu held).
func (cj *Job) join() {
	cj.phase, cj.joinFrom = phaseJoined, cj.sealed+1
	if !cj.closed {
		cj.closed = true
		close(cj.finish)
	}
	cj.cond.Broadcast()
	if cj.wakeGate != nil {
		cj.wakeGate()
	}
}

// CreatingCommitted is the collector's: creating epoch seq, whose parts all said
// finished when finished, committed; replayed is the upstream epoch it replayed.
// It returns the epoch's lag.
func (cj *Job) CreatingCommitted(seq uint64, finished bool, replayed uint64) int64 {
	cj.mu.Lock()
	defer cj.mu.Unlock()
	defer cj.cond.Broadcast()
	switch {
	case replayed > 0:
		cj.dataEpoch = replayed
		// The upstream may go on while its lag is below the limit (up to cutLimit),
		// then the limit shrinks by half an epoch, and to the lag if that is less.
		cj.cutLimit = max(cj.cutLimit, replayed+uint64(max(cj.lim2+1, 0)/2))
		cj.lim2 = min(2*int64(cj.cutLimit-replayed), cj.lim2-1)
		cj.lags[seq] = int64(cj.sealed - replayed)
		// Work-driven, the upstream uses its allowance once the batch has committed.
		if cj.gated && replayed == cj.sentTo && cj.wakeGate != nil {
			cj.wakeGate()
		}
		cj.dispatch()
	case cj.phase == phaseSnapshot && finished:
		// Every snapshot is read: replay what the upstream committed since, with
		// the lag limit at the lag now.
		cj.phase = phaseLog
		cj.cut, cj.cutLimit = cj.sealed, cj.sealed
		cj.lim2 = 2 * int64(cj.sealed-cj.snapshot)
		cj.dispatch()
	}
	lag := cj.lags[seq]
	delete(cj.lags, seq)
	return lag
}

// mailbox is an unbounded queue in front of an actor's input, so that neither the
// taps nor the collector wait for a slow creating job.
type mailbox struct {
	mu    sync.Mutex
	items []stream.Message
	wake  chan struct{}
}

func newMailbox() *mailbox { return &mailbox{wake: make(chan struct{}, 1)} }

func (m *mailbox) push(msg stream.Message) {
	m.mu.Lock()
	m.items = append(m.items, msg)
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// feed moves the mailbox's messages to out, in order, until ctx ends; delay, if
// set, is called before each creating barrier goes out.
func (m *mailbox) feed(ctx context.Context, out chan<- stream.Message, delay func(*stream.Barrier)) error {
	for {
		m.mu.Lock()
		items := m.items
		m.items = nil
		m.mu.Unlock()
		for _, msg := range items {
			if delay != nil && msg.Barrier != nil && msg.Barrier.Creating {
				delay(msg.Barrier)
			}
			select {
			case out <- msg:
			case <-ctx.Done():
				return nil
			}
			if msg.Barrier != nil && msg.Barrier.Final {
				return nil
			}
		}
		select {
		case <-m.wake:
		case <-ctx.Done():
			return nil
		}
	}
}

// SetWakeGate sets the work-driven gate's wake-up, called when the upstream may
// cut again; set it before the taps start.
func (cj *Job) SetWakeGate(wake func()) { cj.wakeGate = wake }

// Finish is closed at the join (time-driven cadence: the next epoch is the last).
func (cj *Job) Finish() <-chan struct{} { return cj.finish }

// Wake wakes the taps held back, to see that their context ended.
func (cj *Job) Wake() {
	cj.mu.Lock()
	cj.cond.Broadcast()
	cj.mu.Unlock()
}

// Actors is what Start wires the creating job's actors to.
type Actors struct {
	DB      *pebble.DB
	Schema  *row.Schema
	Vnodes  int
	Inputs  []chan stream.Message              // each actor's input
	Delay   func(actor int, b *stream.Barrier) // before a creating barrier goes out (nil: none)
	Deliver func(context.Context, LogPart) error
	Fail    func(error) // a tap's or a feed's error
}

// Start runs, on wg, a tap and a mailbox feed per actor, and returns the taps'
// inputs, for the source.
func (cj *Job) Start(ctx context.Context, wg *sync.WaitGroup, w Actors) []chan<- stream.Message {
	outs := make([]chan<- stream.Message, cj.par)
	for a := range cj.par {
		in := make(chan stream.Message, 16)
		outs[a] = in
		var delay func(*stream.Barrier)
		if w.Delay != nil {
			delay = func(b *stream.Barrier) { w.Delay(a, b) }
		}
		wg.Add(2)
		go func() { defer wg.Done(); w.Fail(cj.tap(ctx, a, w.DB, w.Schema, w.Vnodes, in, w.Deliver)) }()
		go func() { defer wg.Done(); w.Fail(cj.boxes[a].feed(ctx, w.Inputs[a], delay)) }()
	}
	return outs
}

// Coupled reports whether the actors get upstream epoch e itself.
func (cj *Job) Coupled(e uint64) bool {
	cj.mu.Lock()
	defer cj.mu.Unlock()
	return cj.coupled(e)
}

// WaitCommitted waits until upstream epoch e has committed, or ctx ends (Wake
// must then be called): a replay reads the epoch's log once it is committed.
func (cj *Job) WaitCommitted(ctx context.Context, e uint64) error {
	cj.mu.Lock()
	defer cj.mu.Unlock()
	for cj.committed < e && ctx.Err() == nil {
		cj.cond.Wait()
	}
	return context.Cause(ctx)
}

// DataEpoch is the upstream epoch the MV holds.
func (cj *Job) DataEpoch() uint64 {
	cj.mu.Lock()
	defer cj.mu.Unlock()
	return cj.dataEpoch
}

// Collect is the collector's: it takes a creating part and hands commit every
// creating epoch whose parts are all in, in order.
func (cj *Job) Collect(p backfill.Part, commit func(seq uint64, parts []backfill.Part) error) error {
	seq := p.Barrier.Epoch.Curr
	cj.parts[seq] = append(cj.parts[seq], p)
	for len(cj.parts[cj.next]) == cj.par {
		parts := cj.parts[cj.next]
		delete(cj.parts, cj.next)
		if err := commit(cj.next, parts); err != nil {
			return err
		}
		cj.next++
	}
	return nil
}

// Close is the collector's: it closes the creating parts not committed.
func (cj *Job) Close() {
	for _, ps := range cj.parts {
		for _, p := range ps {
			p.Close()
		}
	}
}
