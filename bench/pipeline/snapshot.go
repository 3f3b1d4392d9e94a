package pipeline

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/backfill-bench/backfill-bench/bench/backfill"
	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/stream"
)

// Snapshot backfill's control: what the engine's meta and the creating job's
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
//     the upstream epochs committed since, one per barrier. The upstream may go on
//     while its lag (upstream epochs sealed that the MV does not hold) is below a
//     limit that starts at the lag when the phase begins and shrinks by half an
//     epoch per epoch replayed, so the upstream advances at most one epoch for two
//     replayed and the creating job catches up (the engine's max_pending_epoch_lag).
//     Held back, the upstream stalls: the tap stops reading (time-driven), or the
//     gate does not cut (work-driven: the upstream uses its allowance at once, and
//     the next replay waits for it, so every run cuts the same epochs).
//   - Caught up (lag 0), the job joins: from the next upstream epoch on the actors
//     get the upstream's chunks and barriers, and that epoch, the job's last,
//     commits with their parts, as a finished backfill's does.
type creatingJob struct {
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
	// Log phase: the epoch the MV holds, the lag limit in half epochs, whether a
	// replay is out, the last upstream epoch the limit lets through, and
	// (work-driven) the epochs the source has cut.
	dataEpoch        uint64
	lim2             int64
	replaying        bool
	cutLimit, cut    uint64
	committed        uint64 // the last upstream epoch committed
	joinFrom         uint64 // the first coupled upstream epoch (phase joined)
	finalCut, closed bool

	// The collector's: creating parts by creating epoch, the next to commit, and
	// the lag of each creating epoch.
	parts   map[uint64][]backfill.Part
	next    uint64
	lags    map[uint64]int64
	pending EpochTrace // creating work not yet in an upstream epoch's trace
}

const (
	phaseSnapshot = iota
	phaseLog
	phaseJoined
)

type madeBarrier struct {
	b     *stream.Barrier
	taken int
}

func newCreatingJob(par int, snapshot uint64, gated bool, ckptFreq int) *creatingJob {
	cj := &creatingJob{
		par: par, gated: gated, ckptFreq: uint64(max(ckptFreq, 1)), finish: make(chan struct{}),
		snapshot: snapshot, made: map[uint64]*madeBarrier{}, sealed: snapshot,
		dataEpoch: snapshot, committed: snapshot,
		parts: map[uint64][]backfill.Part{}, next: 1, lags: map[uint64]int64{},
	}
	cj.cond = sync.NewCond(&cj.mu)
	for range par {
		cj.boxes = append(cj.boxes, newMailbox())
	}
	return cj
}

// afterScans is the gate's cadence once every snapshot scan has ended
// (work-driven): one more epoch to carry the actors' finished parts, then what the
// log phase allows, then the final epoch at the join.
func (cj *creatingJob) afterScans() (ready, final bool) {
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
		if cj.cut < cj.cutLimit {
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

// logPart is a tap's change log of one upstream epoch, for the epoch's batch.
type logPart struct {
	actor int
	epoch uint64
	batch *pebble.Batch
	bytes int64
	rows  int64
}

// tap stands between the router and actor a: it writes the change log of what the
// upstream sends the actor and, until the join, hands the actor only its creating
// barriers; from the join on, everything.
func (cj *creatingJob) tap(ctx context.Context, a int, db *pebble.DB, schema *row.Schema, vnodes int, in <-chan stream.Message, deliver func(context.Context, logPart) error) error {
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
				val = backfill.AppendLogValue(val[:0], c.Ops[i], r)
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
		if err := deliver(ctx, logPart{actor: a, epoch: epoch, batch: batch, bytes: n, rows: rows}); err != nil {
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
			cj.dispatch() // a replay may have waited for this barrier to be passed on
		}
		held = held[:0]
		cj.sealed = max(cj.sealed, epoch)
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
func (cj *creatingJob) coupled(e uint64) bool { return cj.phase == phaseJoined && e >= cj.joinFrom }

// creatingFor returns the creating-job barrier injected with upstream barrier b
// (cj.mu held).
func (cj *creatingJob) creatingFor(b *stream.Barrier) *stream.Barrier {
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

// upstreamCommitted is the collector's: upstream epoch e has committed.
func (cj *creatingJob) upstreamCommitted(e uint64) {
	cj.mu.Lock()
	defer cj.mu.Unlock()
	cj.committed = e
	// Its taps have all handed in its log, some perhaps not yet marked it passed:
	// the join must not make it coupled.
	cj.sealed = max(cj.sealed, e)
	cj.dispatch()
}

// dispatch sends the next replay barrier when its epoch is committed and (work
// driven) the upstream has used its allowance, or joins once the creating job has
// caught up (cj.mu held).
func (cj *creatingJob) dispatch() {
	// A creating barrier of the snapshot phase that some tap has not passed on yet
	// goes first: a replay's barrier sent now would reach that tap's actor before it,
	// out of epoch order.
	if cj.phase != phaseLog || cj.replaying || len(cj.made) > 0 {
		return
	}
	if cj.gated && cj.committed < max(cj.cut, cj.cutLimit) {
		return
	}
	u := cj.dataEpoch + 1
	if u > cj.sealed {
		if cj.committed >= cj.sealed && (!cj.gated || cj.cut >= cj.cutLimit) {
			cj.join()
		}
		return
	}
	if u > cj.committed {
		return
	}
	cj.seq++
	now := time.Now()
	b := &stream.Barrier{Epoch: stream.Epoch{Prev: cj.seq - 1, Curr: cj.seq}, Injected: now, Checkpoint: u%cj.ckptFreq == 0, Creating: true, Replay: u}
	for _, box := range cj.boxes {
		box.push(stream.Message{Barrier: b})
	}
	cj.replaying = true
}

// join couples the creating job to the upstream from the next upstream epoch on
// (cj.mu held).
func (cj *creatingJob) join() {
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

// creatingCommitted is the collector's: creating epoch seq, whose parts all said
// finished when finished, committed; replayed is the upstream epoch it replayed.
// It returns the epoch's lag.
func (cj *creatingJob) creatingCommitted(seq uint64, finished bool, replayed uint64) int64 {
	cj.mu.Lock()
	defer cj.mu.Unlock()
	defer cj.cond.Broadcast()
	switch {
	case replayed > 0:
		cj.replaying = false
		cj.dataEpoch = replayed
		// The upstream may go on while its lag is below the limit (up to cutLimit),
		// then the limit shrinks by half an epoch, and to the lag if that is less.
		cj.cutLimit = max(cj.cutLimit, replayed+uint64(max(cj.lim2+1, 0)/2))
		cj.lim2 = min(2*int64(cj.cutLimit-replayed), cj.lim2-1)
		if cj.gated { // work-driven: the upstream uses its allowance at once
			cj.lags[seq] = int64(cj.cutLimit - replayed)
			if cj.wakeGate != nil {
				cj.wakeGate()
			}
		} else {
			cj.lags[seq] = int64(cj.sealed - replayed)
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

// collectCreating is the collector's: it takes a creating part and commits every
// creating epoch whose parts are all in, in order.
func (c *collector) collectCreating(p backfill.Part) error {
	cj := c.cj
	seq := p.Barrier.Epoch.Curr
	cj.parts[seq] = append(cj.parts[seq], p)
	for len(cj.parts[cj.next]) == c.par {
		parts := cj.parts[cj.next]
		delete(cj.parts, cj.next)
		if err := c.commitCreating(cj.next, parts); err != nil {
			return err
		}
		cj.next++
	}
	return nil
}

// commitCreating commits one creating epoch: its MV and state rows, apart from the
// upstream's epochs.
func (c *collector) commitCreating(seq uint64, parts []backfill.Part) error {
	cj := c.cj
	slices.SortFunc(parts, func(a, b backfill.Part) int { return a.Actor - b.Actor })
	bar := parts[0].Barrier
	tr := EpochTrace{Epoch: seq, Injected: bar.Injected, Checkpoint: bar.Checkpoint, Replayed: bar.Replay}
	var batches []*pebble.Batch
	finished := true
	for _, a := range parts {
		batches = append(batches, a.MV...)
	}
	for _, a := range parts {
		batches = append(batches, a.State)
		tr.SnapshotRows += a.SnapshotRows
		tr.UpstreamRows += a.UpstreamRows
		tr.StateRows += a.StateRows
		tr.StateBytes += a.StateBytes
		tr.StateTime += a.StateTime
		tr.Phases = tr.Phases.Add(a.Phases)
		tr.Rebuilds += a.Rebuilds
		c.res.Logical.MV += a.MVBytes
		c.res.Logical.State += a.StateBytes
		c.netRows += a.NetRows
		finished = finished && a.Finished
	}
	if c.progress != nil {
		if err := c.progress.CommitCreating(c.store, seq, parts); err != nil {
			for _, p := range batches {
				p.Close()
			}
			return err
		}
	}
	b, err := c.store.DB.NewBatch(), error(nil)
	for _, p := range batches {
		if err == nil {
			err = b.Apply(p, nil)
		}
		p.Close()
	}
	if err != nil {
		b.Close()
		return fmt.Errorf("creating epoch %d: %w", seq, err)
	}
	cj.mu.Lock()
	data := cj.dataEpoch
	cj.mu.Unlock()
	if bar.Replay > 0 {
		data = bar.Replay
	}
	if c.record != nil { // the replay baseline commits it too, in commit order
		cj.mu.Lock()
		up := cj.committed // its epoch numbers go on from the upstream's
		cj.mu.Unlock()
		if err := c.record.Add(up, bar.Checkpoint, b.Repr(), tr.SnapshotRows, tr.UpstreamRows); err != nil {
			b.Close()
			return err
		}
	}
	committing := time.Now()
	if err := c.store.CommitCreating(b, seq, data, bar.Checkpoint); err != nil {
		return err
	}
	if c.progress != nil {
		if err := c.progress.CommittedCreating(c.store, seq); err != nil {
			return err
		}
	}
	now := time.Now()
	tr.Commit = now.Sub(committing)
	tr.Latency = now.Sub(tr.Injected)
	tr.CPU = jobCPU(c.store) - c.cpuStart
	tr.Lag = cj.creatingCommitted(seq, finished, bar.Replay)
	c.res.Creating = append(c.res.Creating, tr)
	c.res.SnapshotRows += tr.SnapshotRows
	c.res.UpstreamRows += tr.UpstreamRows
	// The upstream epoch that commits next carries the creating work's direct
	// costs in its trace, so per-epoch state figures stay whole.
	p := &cj.pending
	p.StateRows += tr.StateRows
	p.StateBytes += tr.StateBytes
	p.StateTime += tr.StateTime
	c.log.Debug("creating epoch committed", "epoch", seq, "latency", tr.Latency, "snapshot_rows", tr.SnapshotRows, "replayed", bar.Replay, "lag", tr.Lag)
	return nil
}

// takePending moves the creating work's state figures into upstream trace tr.
func (cj *creatingJob) takePending(tr *EpochTrace) {
	tr.StateRows += cj.pending.StateRows
	tr.StateBytes += cj.pending.StateBytes
	tr.StateTime += cj.pending.StateTime
	cj.pending = EpochTrace{}
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
