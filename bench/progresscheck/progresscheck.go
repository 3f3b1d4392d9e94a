// Package progresscheck checks, at every commit of a backfill job, each state row
// the epoch writes against what the actors emitted (see Check).
package progresscheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/backfill-bench/backfill-bench/bench/backfill"
	"github.com/backfill-bench/backfill-bench/bench/memcmp"
	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/stream"
	"github.com/backfill-bench/backfill-bench/bench/verify"
)

// Check checks, at every commit of every job, each state row the epoch
// writes against what it must be, derived independently of the executor: from the
// snapshot rows each actor emitted downstream (their vnode hashed here, their order
// checked), cut at the epoch boundaries (an actor's part is delivered after its
// epoch's rows), and from table A. A persisted position one row off, a vnode given
// another's position, a row count off by one, a vnode called finished while A
// still has rows beyond its position, a snapshot row emitted twice or out of order:
// each fails the job at the commit, naming the epoch and the vnode. The end-of-job
// checks (verify.MV, verify.State) only see the last state; a wrong position
// matters only after a crash, which an ordinary run does not have.
//
// The snapshot scan (scan=snapshot) is checked at each commit of its creating
// job's own epochs (CommitCreating), with the same expected per-vnode rows, a
// finished vnode checked against the snapshot the scan read (pinned here at the
// job's start, released once the log phase begins) and B checked at each actor's
// latest position against that snapshot. Its log phase is checked by epoch: each
// replay barrier must replay the next upstream epoch (the snapshot's + 1 first,
// only once every actor's snapshot is read), the state rows must stay as the
// snapshot phase left them, creating_epoch must hold the creating epoch and the
// upstream epoch replayed after each commit, and the job must join the upstream at
// the epoch after the last one replayed. Not checked per epoch: that B equals A at
// each replayed epoch (only verify.MV, at the job's end, compares them).
//
// Its cost is in the job's window: per snapshot row a vnode hash and a key
// comparison (an integer key's in place: chunkInt); per commit, the state rows
// written read and, where their bytes changed, decoded and compared (an actor's
// batch repeated byte for byte is not read again), a few point reads of A and B
// and, in one iterator, a seek per vnode that finished (README: "The check's
// cost", measured).
type Check struct {
	schema  *row.Schema
	persist bool
	merged  bool
	// The snapshot scan's: the snapshot of A it reads (nil once the log phase
	// began), the upstream epoch its MV holds as committed, whether it joined.
	snapshot bool
	snap     *storage.EpochSnapshot
	replayed uint64
	joined   bool
	actors   []*actorProgress
	// The state table as the epoch batches wrote it: each vnode's last written row.
	table []backfill.VnodeState
	has   []bool
	// Each vnode's state value as last written: a rewrite of the same bytes (every
	// vnode's, at each epoch of the snapshot scan's log phase) is not decoded again.
	raw [][]byte
	// The space of each vnode's table[v].Pos once an epoch wrote it, and of the
	// state value being decoded: no allocation per state row.
	pos     [][]row.Datum
	decoded []row.Datum
	// Each vnode's state key, keys[ends[v-1]:ends[v]]; the key a finished vnode's
	// check seeks to.
	keys []byte
	ends []int
	seek []byte
	// Each actor's latest position at the previous commit, checked (B = A there)
	// once that epoch's snapshot is readable.
	heads []headPos
	// Each vnode's state row changed in the commit being checked (until checked),
	// and each actor's progress at its last check: an actor that emitted nothing
	// since, whose vnodes' state rows did not change, is not compared again (the
	// snapshot scan's log phase rewrites every state row at every epoch).
	dirty   []bool
	checked []checkedAt
	// State rows changed so far, and each actor's last state batch with the
	// count when it was read: the same batch again, with no state row changed
	// since, writes what the table holds and is not read again.
	changes int64
	batches []sentBatch
	Alter   func(*backfill.Part) // tests: a bug injected in the parts delivered
}

// sentBatch is an actor's last state batch (its repr) and the state rows changed
// once it was read.
type sentBatch struct {
	repr    []byte
	changes int64
}

// checkedAt is what an actor had emitted at its last check: rows (all vnodes')
// and whether its scan had ended.
type checkedAt struct {
	ok        bool
	total     int64
	exhausted bool
}

// headPos is an actor's latest emitted pk and its vnode at one epoch.
type headPos struct {
	epoch uint64
	vnode uint16
	pk    []row.Datum
}

// actorProgress is what one actor emitted, as the progress check sees it. The
// actor's goroutine writes it; the source reads positions from it and the
// collector takes its sealed epochs.
type actorProgress struct {
	mu     sync.Mutex
	lo     int // its first vnode
	pkLen  int
	schema *row.Schema
	merged bool
	vnoder *storage.Vnoder
	// A primary key of one ascending integer column that is also the distribution
	// key: that column and its kind (chunkInt).
	intKey bool
	pkCol  int
	pkKind row.Kind
	vnodes []uint16 // of the chunk's rows
	// Per owned vnode, its last row in the chunk being read (-1: none, as between
	// chunks), and the vnodes that have one: positions are copied once a chunk,
	// not once a row.
	inChunk []int32
	touched []int
	cur     epochProgress   // so far
	sealed  []epochProgress // delivered epochs not yet committed, oldest first
	free    []epochProgress // checked epochs, whose slices seal reuses
}

// epochProgress is an actor's progress at a point: per owned vnode the last emitted
// pk (pkLen datums each in pks, valid where emitted) and the rows emitted, with
// those before a recovery; the actor's latest pk; whether its scan has ended; the
// first emission out of order.
type epochProgress struct {
	epoch     uint64
	creating  bool // of the snapshot scan's creating job
	pks       []row.Datum
	emitted   []bool
	rows      []int64
	total     int64 // rows emitted, over its vnodes (those resumed from included)
	head      []row.Datum
	headVnode uint16
	ran       bool // a row was emitted in this run (since a resume)
	exhausted bool
	bad       error
}

// cloneInto returns a copy of p in dst's slices (the head always its own: the
// check keeps it past the commit).
func (p epochProgress) cloneInto(dst epochProgress) epochProgress {
	p.pks, p.emitted, p.rows = append(dst.pks[:0], p.pks...), append(dst.emitted[:0], p.emitted...), append(dst.rows[:0], p.rows...)
	p.head = slices.Clone(p.head)
	return p
}

// Config is what the check needs of a job.
type Config struct {
	Schema  *row.Schema
	Scan    backfill.Scan
	Persist bool
	Par     int // actors
	Vnodes  int
	// Resume is a recovered job's persisted state by vnode (nil: a fresh start).
	Resume []backfill.VnodeState
	// Store is the job's DB; the snapshot scan's check pins its latest snapshot.
	Store *storage.Store
}

// New starts the check of a job's run, from its persisted state when it resumes
// one. A scan it does not know is an error: no run goes unchecked.
func New(cfg Config) (*Check, error) {
	if cfg.Scan < 0 || int(cfg.Scan) >= len(backfill.Scans) {
		return nil, fmt.Errorf("progress check: scan %d unknown: add it to scankind.Kinds", cfg.Scan)
	}
	s, kind := cfg.Schema, cfg.Scan.Kind()
	// The kind's properties say what its state rows must be: one position per actor
	// (merged) or per vnode, in the upstream's epochs or a creating job's.
	pc := &Check{schema: s, persist: cfg.Persist, merged: kind.OnePositionPerActor, snapshot: kind.RunsCreatingJob,
		table: make([]backfill.VnodeState, cfg.Vnodes), has: make([]bool, cfg.Vnodes), pos: make([][]row.Datum, cfg.Vnodes), heads: make([]headPos, cfg.Par),
		dirty: make([]bool, cfg.Vnodes), checked: make([]checkedAt, cfg.Par), batches: make([]sentBatch, cfg.Par)}
	if kind.RunsCreatingJob {
		if cfg.Resume != nil {
			return nil, fmt.Errorf("progress check: scan=%s cannot resume", kind.Name)
		}
		if Enabled {
			// The snapshot the creating job reads: the latest at its start.
			pc.snap = cfg.Store.Latest()
			pc.replayed = pc.snap.Epoch
		}
	}
	pkLen := len(s.PK)
	// Room for the usual state value and position of each vnode in one allocation
	// each; a longer one (long strings in the key) allocates its own.
	const valueRoom = 64
	for v := range pc.table {
		pc.table[v].Vnode = uint16(v)
	}
	if Enabled {
		raw, pos := make([]byte, cfg.Vnodes*valueRoom), make([]row.Datum, cfg.Vnodes*pkLen)
		pc.raw, pc.ends = make([][]byte, cfg.Vnodes), make([]int, cfg.Vnodes)
		for v := range pc.table {
			pc.raw[v] = raw[v*valueRoom : v*valueRoom : (v+1)*valueRoom]
			pc.pos[v] = pos[v*pkLen : v*pkLen : (v+1)*pkLen]
			pc.keys = backfill.AppendStateKey(pc.keys, uint16(v))
			pc.ends[v] = len(pc.keys)
		}
	}
	for a := range cfg.Par {
		lo, hi := storage.OwnedVnodes(a, cfg.Par, cfg.Vnodes)
		n := hi - lo
		ap := &actorProgress{lo: lo, pkLen: pkLen, schema: s, merged: pc.merged, vnoder: storage.NewVnoder(s, cfg.Vnodes), inChunk: make([]int32, n),
			cur: epochProgress{pks: make([]row.Datum, n*pkLen), emitted: make([]bool, n), rows: make([]int64, n)}}
		for i := range ap.inChunk {
			ap.inChunk[i] = -1 // none: chunk leaves every entry so
		}
		if c := s.PK[0]; pkLen == 1 && !s.Desc(0) && len(s.DistKey) == 1 && s.DistKey[0] == c {
			ap.pkCol, ap.pkKind = c, s.Columns[c].Kind
			ap.intKey = ap.pkKind == row.Int64 || ap.pkKind == row.Timestamp
		}
		if cfg.Resume != nil {
			done := true
			for i, st := range cfg.Resume[lo:hi] {
				pc.table[lo+i], pc.has[lo+i] = st, st.Pos != nil || st.Finished || st.RowCount != 0
				ap.cur.rows[i] = st.RowCount
				ap.cur.total += st.RowCount
				done = done && st.Finished
				if st.Pos != nil {
					copy(ap.cur.pks[i*pkLen:], st.Pos)
					ap.cur.emitted[i] = true
					if pc.merged && ap.cur.head == nil {
						// The executor resumes from the first vnode's position; the
						// others agree unless every vnode is finished.
						ap.cur.head, ap.cur.headVnode = slices.Clone(st.Pos), uint16(lo+i)
					}
				}
			}
			ap.cur.exhausted = done
		}
		pc.actors = append(pc.actors, ap)
	}
	return pc, nil
}

// Release drops the pinned snapshot of the snapshot scan, if held. The collector
// calls it, as the only user of the check's commits.
func (pc *Check) Release() {
	if pc != nil && pc.snap != nil {
		pc.snap.Release()
		pc.snap = nil
	}
}

// chunk records a snapshot chunk actor a emitted: per row its vnode (hashed here)
// and its order after the row it must follow (merged: the actor's previous one;
// else its vnode's, in this chunk or before it); per touched vnode, once a chunk,
// its last pk.
func (a *actorProgress) chunk(c *stream.Chunk) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cur.total += int64(c.Len())
	if a.intKey {
		a.chunkInt(c)
		return
	}
	p := &a.cur
	a.touched = a.touched[:0]
	last := -1 // the owned-vnode index of the chunk's last row
	for n, r := range c.Rows {
		v := a.vnoder.Of(r)
		i := int(v) - a.lo
		if uint(i) >= uint(len(p.rows)) {
			if p.bad == nil {
				p.bad = fmt.Errorf("snapshot row pk %v is of vnode %d, which the actor does not own", row.Row(a.schema.PKOf(nil, r)), v)
			}
			continue
		}
		k := a.inChunk[i]
		if k < 0 {
			a.touched = append(a.touched, i)
		}
		var ordered bool
		switch {
		case a.merged && n > 0:
			ordered = a.schema.ComparePK(r, c.Rows[n-1]) > 0
		case a.merged:
			ordered = len(p.head) == 0 || a.schema.CompareRowToPK(r, p.head) > 0
		case k >= 0:
			ordered = a.schema.ComparePK(r, c.Rows[k]) > 0
		default:
			ordered = !p.emitted[i] || a.schema.CompareRowToPK(r, p.pks[i*a.pkLen:(i+1)*a.pkLen]) > 0
		}
		if !ordered && p.bad == nil {
			a.recordOutOfOrder(c, n, i, k)
		}
		a.inChunk[i] = int32(n)
		p.rows[i]++
		last = i
	}
	for _, i := range a.touched {
		a.schema.PKOf(p.pks[i*a.pkLen:i*a.pkLen], c.Rows[a.inChunk[i]])
		p.emitted[i], p.ran = true, true
		a.inChunk[i] = -1
	}
	if n := c.Len(); n > 0 {
		p.head, p.headVnode = a.schema.PKOf(p.head[:0], c.Rows[n-1]), uint16(a.lo+max(last, 0))
	}
}

// chunkInt is chunk for a primary key of one ascending integer column that is
// also the distribution key (most workloads'), with the same checks: each row's
// vnode hashed from its value, its value compared with its predecessor's (as
// integers unless one is NULL), each vnode's position kept in place (pks[i] is
// its last row's; such a datum's S is always empty).
func (a *actorProgress) chunkInt(c *stream.Chunk) {
	col, kind, p := a.pkCol, a.pkKind, &a.cur
	var prev row.Datum // merged: the actor's previous row's key
	hasPrev := a.merged && len(p.head) > 0
	if hasPrev {
		prev = p.head[0]
	}
	last := -1
	a.vnodes = a.vnoder.OfRows(a.vnodes[:0], c.Rows)
	for n, r := range c.Rows {
		d := &r[col]
		i := int(a.vnodes[n]) - a.lo
		if uint(i) >= uint(len(p.rows)) {
			if p.bad == nil {
				p.bad = fmt.Errorf("snapshot row pk %v is of vnode %d, which the actor does not own", row.Row(a.schema.PKOf(nil, r)), i+a.lo)
			}
			continue
		}
		pk := &p.pks[i]
		switch {
		case a.merged:
			if hasPrev && !after(d, &prev, kind) && p.bad == nil {
				p.bad = outOfOrder(a.lo+i, r[col:col+1], []row.Datum{prev})
			}
			prev.Kind, prev.I, hasPrev = d.Kind, d.I, true
		case p.emitted[i] && !after(d, pk, kind) && p.bad == nil:
			p.bad = outOfOrder(a.lo+i, r[col:col+1], []row.Datum{*pk})
		}
		pk.Kind, pk.I = d.Kind, d.I
		p.emitted[i] = true
		p.rows[i]++
		last = i
	}
	if last >= 0 {
		p.ran = true
	}
	if n := c.Len(); n > 0 {
		p.head, p.headVnode = append(p.head[:0], c.Rows[n-1][col]), uint16(a.lo+max(last, 0))
	}
}

// after is whether integer datum d (of kind, or NULL) orders after prev.
func after(d, prev *row.Datum, kind row.Kind) bool {
	if d.Kind == kind && prev.Kind == kind {
		return d.I > prev.I
	}
	return compareDatums(d, prev) > 0
}

// compareDatums is row.Compare, out of after's line so that after inlines.
//
//go:noinline
func compareDatums(a, b *row.Datum) int { return row.Compare(*a, *b) }

// recordOutOfOrder records the error of chunk row n, of owned vnode index i,
// emitted after the row it must follow (k: its vnode's previous row in the chunk,
// or -1).
func (a *actorProgress) recordOutOfOrder(c *stream.Chunk, n, i int, k int32) {
	p := &a.cur
	var prev []row.Datum
	switch {
	case a.merged && n > 0:
		prev = a.schema.PKOf(nil, c.Rows[n-1])
	case a.merged:
		prev = p.head
	case k >= 0:
		prev = a.schema.PKOf(nil, c.Rows[k])
	default:
		prev = p.pks[i*a.pkLen : (i+1)*a.pkLen]
	}
	p.bad = outOfOrder(a.lo+i, a.schema.PKOf(nil, c.Rows[n]), prev)
}

// outOfOrder is the error of a snapshot row of vnode v with pk emitted after pk
// prev.
func outOfOrder(v int, pk, prev []row.Datum) error {
	return fmt.Errorf("vnode %d: snapshot row pk %v emitted after pk %v: a scan emits each row once, in pk order (merged: over the actor, per-vnode: in each vnode)", v, row.Row(pk), row.Row(prev))
}

// chunkHead records, when the check is compiled out (Enabled false), only
// the actor's latest position, for the boundary changes (positions).
func (a *actorProgress) chunkHead(c *stream.Chunk) {
	if n := c.Len(); n > 0 {
		a.mu.Lock()
		a.cur.head = a.schema.PKOf(a.cur.head[:0], c.Rows[n-1])
		a.mu.Unlock()
	}
}

// exhaust records that the actor's scan ended.
func (a *actorProgress) exhaust() {
	a.mu.Lock()
	a.cur.exhausted = true
	a.mu.Unlock()
}

// seal records the actor's progress at the end of epoch, as the part it delivers
// describes it.
func (a *actorProgress) seal(epoch uint64, creating bool) {
	a.mu.Lock()
	a.cur.epoch, a.cur.creating = epoch, creating
	var dst epochProgress
	if n := len(a.free); n > 0 {
		dst, a.free = a.free[n-1], a.free[:n-1]
	}
	a.sealed = append(a.sealed, a.cur.cloneInto(dst))
	a.mu.Unlock()
}

// recycle hands back p, taken and checked, for seal to reuse its slices.
func (a *actorProgress) recycle(p epochProgress) {
	a.mu.Lock()
	a.free = append(a.free, epochProgress{pks: p.pks, emitted: p.emitted, rows: p.rows})
	a.mu.Unlock()
}

// take returns the progress sealed at epoch (creating: the creating job's epoch).
func (a *actorProgress) take(epoch uint64, creating bool) (epochProgress, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.sealed) == 0 || a.sealed[0].epoch != epoch || a.sealed[0].creating != creating {
		return epochProgress{}, false
	}
	p := a.sealed[0]
	a.sealed = a.sealed[:copy(a.sealed, a.sealed[1:])] // in place: seal's appends reuse the space
	return p, true
}

// Hooks wraps actor a's environment: its emitted chunks, the end of its scan and
// its deliveries feed the check.
func (pc *Check) Hooks(a int, env backfill.Env) backfill.Env {
	ap := pc.actors[a]
	deliver, exhausted := env.Deliver, env.OnExhausted
	if !Enabled {
		env.OnChunk = ap.chunkHead
		return env
	}
	env.OnChunk = ap.chunk
	env.Deliver = func(ctx context.Context, p backfill.Part) error {
		if pc.Alter != nil {
			q := p // on the heap only here, in tests
			pc.Alter(&q)
			p = q
		}
		ap.seal(p.Barrier.Epoch.Curr, p.Creating)
		return deliver(ctx, p)
	}
	env.OnExhausted = func() {
		ap.exhaust()
		if exhausted != nil {
			exhausted()
		}
	}
	return env
}

// Positions are the scans' positions for the source's boundary changes (see
// source.Config.Positions): each actor's latest, then every vnode's.
func (pc *Check) Positions(dst [][]row.Datum) ([][]row.Datum, int) {
	if pc == nil {
		return dst, 0
	}
	dst = dst[:0]
	for _, a := range pc.actors {
		a.mu.Lock()
		if a.cur.head != nil {
			dst = appendPK(dst, a.cur.head)
		}
		a.mu.Unlock()
	}
	heads := len(dst)
	for _, a := range pc.actors {
		a.mu.Lock()
		for i, ok := range a.cur.emitted {
			if ok {
				dst = appendPK(dst, a.cur.pks[i*a.pkLen:(i+1)*a.pkLen])
			}
		}
		a.mu.Unlock()
	}
	return dst, heads
}

// appendPK appends a copy of pk to dst, in the slice dst held there before, if any
// (the source hands back its previous positions).
func appendPK(dst [][]row.Datum, pk []row.Datum) [][]row.Datum {
	if n := len(dst); n < cap(dst) {
		dst = dst[:n+1]
		dst[n] = append(dst[n][:0], pk...)
		return dst
	}
	return append(dst, slices.Clone(pk))
}

// Commit checks the state rows of upstream epoch, in its parts, before they
// Commit: the latest snapshot is then the epoch before it, the one its scans read.
func (pc *Check) Commit(store *storage.Store, epoch uint64, parts []backfill.Part) error {
	if !Enabled {
		return nil
	}
	if pc.snapshot {
		switch {
		case len(parts) == 0 && !pc.joined:
			return nil // the creating job commits apart (CommitCreating)
		case len(parts) == 0:
			return fmt.Errorf("progress check: upstream epoch %d: no actor part after the creating job joined the upstream", epoch)
		case !pc.joined && epoch != pc.replayed+1:
			return fmt.Errorf("progress check: upstream epoch %d: the creating job joined the upstream here, but its MV holds upstream epoch %d: the epochs between were not replayed", epoch, pc.replayed)
		}
		pc.joined = true
		pc.replayed = epoch
	}
	return pc.check(store, epoch, false, parts)
}

// CommitCreating checks the state rows of the snapshot scan's creating epoch seq,
// in its parts, before they commit, and the upstream epoch it replays, if any.
func (pc *Check) CommitCreating(store *storage.Store, seq uint64, parts []backfill.Part) error {
	if !Enabled {
		return nil
	}
	if !pc.snapshot || pc.joined {
		return fmt.Errorf("progress check: creating epoch %d committed, but the job is not a snapshot scan's creating job (or it joined the upstream)", seq)
	}
	replay := parts[0].Replayed
	for _, p := range parts {
		if p.Replayed != replay {
			return fmt.Errorf("progress check: creating epoch %d: actor %d replayed upstream epoch %d, actor %d epoch %d", seq, parts[0].Actor, replay, p.Actor, p.Replayed)
		}
	}
	if replay > 0 {
		if replay != pc.replayed+1 {
			return fmt.Errorf("progress check: creating epoch %d: replays upstream epoch %d, but the MV holds upstream epoch %d: the change log must be replayed in order", seq, replay, pc.replayed)
		}
	} else if pc.snap == nil {
		return fmt.Errorf("progress check: creating epoch %d: replays nothing after the log phase began", seq)
	}
	if err := pc.check(store, seq, true, parts); err != nil {
		return err
	}
	if replay > 0 {
		pc.replayed = replay
		pc.Release() // the snapshot phase is over
	}
	return nil
}

// CommittedCreating checks, after creating epoch seq committed, its creating_epoch
// row and (snapshot phase) B at each actor's latest position.
func (pc *Check) CommittedCreating(store *storage.Store, seq uint64) error {
	if !Enabled {
		return nil
	}
	snap := store.NewSnapshot()
	defer snap.Close()
	got, data, ok, err := storage.CreatingEpoch(snap)
	if err != nil {
		return fmt.Errorf("progress check: creating epoch %d: %w", seq, err)
	}
	if !ok || got != seq || data != pc.replayed {
		return fmt.Errorf("progress check: creating epoch %d: creating_epoch holds (%d, upstream %d, present %v), want (%d, upstream %d)", seq, got, data, ok, seq, pc.replayed)
	}
	if pc.snap == nil {
		return nil
	}
	for a, h := range pc.heads {
		if h.pk == nil || h.epoch != seq {
			continue
		}
		if err := pc.compareAB(pc.snap.Snap, snap, a, h, fmt.Sprintf("creating epoch %d", seq),
			fmt.Sprintf("A at the snapshot read (epoch %d)", pc.snap.Epoch), "the snapshot row emitted was not materialized"); err != nil {
			return err
		}
	}
	return nil
}

// check checks the state rows of epoch (creating: a creating job's), in its parts,
// against what the rows the actors emitted say.
func (pc *Check) check(store *storage.Store, epoch uint64, creating bool, parts []backfill.Part) error {
	label := "epoch"
	if creating {
		label = "creating epoch"
	}
	fail := func(v int, format string, args ...any) error {
		return fmt.Errorf("progress check: %s %d, vnode %d: %s", label, epoch, v, fmt.Sprintf(format, args...))
	}
	pkLen := len(pc.schema.PK)
	var newlyFinished []int
	for _, p := range parts {
		if pc.sameBatch(p) {
			continue
		}
		r := p.State.Reader()
		for {
			kind, k, val, ok, err := r.Next()
			if err != nil {
				return fmt.Errorf("progress check: %s %d: actor %d's state batch: %w", label, epoch, p.Actor, err)
			}
			if !ok {
				break
			}
			v := int(storage.KeyVnode(k))
			if !pc.persist {
				return fail(v, "persist=off wrote a state row")
			}
			if kind != pebble.InternalKeyKindSet || v >= len(pc.table) || !bytes.Equal(k, pc.stateKey(v)) {
				return fail(v, "actor %d wrote a state key %x of kind %v; want a set of the vnode's state row", p.Actor, k, kind)
			}
			if pc.has[v] && bytes.Equal(val, pc.raw[v]) {
				continue // as the vnode's state row holds (checked when written)
			}
			pc.raw[v] = append(pc.raw[v][:0], val...)
			pc.dirty[v] = true
			pc.changes++
			var st backfill.VnodeState
			st, pc.decoded, err = backfill.DecodeStateInto(pc.decoded, val, pkLen)
			if err != nil {
				return fail(v, "%v", err)
			}
			if st.Pos != nil { // kept in the vnode's own space, not the decoding's
				pc.pos[v] = append(pc.pos[v][:0], st.Pos...)
				st.Pos = pc.pos[v]
			}
			if pc.has[v] && pc.table[v].Finished && !st.Finished {
				return fail(v, "persisted unfinished after it was persisted finished")
			}
			if st.Finished && !(pc.has[v] && pc.table[v].Finished) {
				newlyFinished = append(newlyFinished, v)
			}
			pc.table[v], pc.has[v] = st, true
		}
		if a := p.Actor; a >= 0 && a < len(pc.batches) {
			pc.batches[a] = sentBatch{repr: append(pc.batches[a].repr[:0], p.State.Repr()...), changes: pc.changes}
		}
	}
	snap := store.Latest()
	defer snap.Release()
	for a, ap := range pc.actors {
		exp, ok := ap.take(epoch, creating)
		if !ok {
			return fmt.Errorf("progress check: %s %d: actor %d delivered no part for it", label, epoch, a)
		}
		if exp.bad != nil {
			return fmt.Errorf("progress check: %s %d, actor %d: %w", label, epoch, a, exp.bad)
		}
		if creating && parts[0].Replayed > 0 && !exp.exhausted {
			return fmt.Errorf("progress check: creating epoch %d: replays upstream epoch %d before actor %d's snapshot was read", epoch, parts[0].Replayed, a)
		}
		if !pc.snapshot { // the snapshot scan's: committedCreating
			if err := pc.checkHead(snap, a, epoch); err != nil {
				return err
			}
		}
		pc.heads[a] = headPos{epoch: epoch, vnode: exp.headVnode, pk: exp.head}
		if !pc.persist || pc.unchanged(a, ap, exp) {
			ap.recycle(exp)
			continue
		}
		for i := range exp.rows {
			v := ap.lo + i
			want := backfill.VnodeState{Vnode: uint16(v), RowCount: exp.rows[i], Finished: exp.exhausted}
			switch {
			case pc.merged && exp.ran: // every vnode at the actor's one position
				want.Pos = exp.head
			case exp.emitted[i]:
				want.Pos = exp.pks[i*pkLen : (i+1)*pkLen]
			}
			got := pc.table[v]
			switch {
			case !pc.has[v]:
				if want.Pos != nil || want.Finished {
					return fail(v, "no state row, but the rows emitted say %s", describeState(want))
				}
			case !samePos(got.Pos, want.Pos) || got.RowCount != want.RowCount,
				want.Finished && !got.Finished, pc.merged && got.Finished && !want.Finished:
				return fail(v, "the state row has %s, but the rows emitted say %s", describeState(got), describeState(want))
			}
			pc.dirty[v] = false
		}
		pc.checked[a] = checkedAt{ok: true, total: exp.total, exhausted: exp.exhausted}
		ap.recycle(exp)
	}
	if len(newlyFinished) == 0 {
		return nil
	}
	read := snap
	switch {
	case pc.snapshot && pc.snap == nil:
		return fail(newlyFinished[0], "persisted finished in the log phase, after every snapshot was read")
	case pc.snapshot:
		read = pc.snap
	case snap.Epoch+1 != epoch:
		return nil // not the epoch the scan read
	}
	// One iterator over A for every vnode that finished, seeking forward (the state
	// rows come in vnode order).
	lo, hi := storage.TableBounds(storage.TableUpstream)
	it, err := read.Snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return err
	}
	defer it.Close()
	for _, v := range newlyFinished {
		if err := pc.checkFinished(it, read.Epoch, label, epoch, v); err != nil {
			return err
		}
	}
	return nil
}

// sameBatch is whether part p's state batch is its actor's last one, byte for
// byte, with no state row changed since that was read: its rows are as the state
// table holds them (the snapshot scan's log phase rewrites every row each epoch).
func (pc *Check) sameBatch(p backfill.Part) bool {
	a := p.Actor
	if a < 0 || a >= len(pc.batches) || pc.batches[a].repr == nil || pc.batches[a].changes != pc.changes {
		return false
	}
	return bytes.Equal(p.State.Repr(), pc.batches[a].repr)
}

// unchanged is whether actor a's state rows must be as at its last check: it
// emitted nothing since, its scan's end is as it was, and no state row of its
// vnodes changed.
func (pc *Check) unchanged(a int, ap *actorProgress, exp epochProgress) bool {
	c := pc.checked[a]
	if !c.ok || c.total != exp.total || c.exhausted != exp.exhausted {
		return false
	}
	return !slices.Contains(pc.dirty[ap.lo:ap.lo+len(exp.rows)], true)
}

// stateKey is vnode v's state key.
func (pc *Check) stateKey(v int) []byte {
	lo := 0
	if v > 0 {
		lo = pc.ends[v-1]
	}
	return pc.keys[lo:pc.ends[v]]
}

// checkFinished checks that A at the snapshot the finishing scan read (it, an
// iterator of table A at epoch snapEpoch) has no row of vnode v after the position
// persisted with finished.
func (pc *Check) checkFinished(it *pebble.Iterator, snapEpoch uint64, label string, epoch uint64, v int) error {
	lo := storage.AppendPrefix(pc.seek[:0], storage.TableUpstream, uint16(v))
	if pos := pc.table[v].Pos; pos != nil {
		lo = append(memcmp.AppendKey(lo, pos, pc.schema.PKDesc), 0) // just above pos
	}
	pc.seek = lo
	if it.SeekGE(lo) && storage.KeyVnode(it.Key()) == uint16(v) {
		return fmt.Errorf("progress check: %s %d, vnode %d: persisted finished at %s, but A at epoch %d still has %s after it",
			label, epoch, v, describeState(pc.table[v]), snapEpoch, verify.DescribeKey(it.Key()[4:], pc.schema))
	}
	return it.Error()
}

// checkHead checks that B holds A's row at actor a's latest position of the epoch
// before: a change aimed there (Mix.Boundary) must have been forwarded, as the
// filter keeps pk ≤ position.
func (pc *Check) checkHead(snap *storage.EpochSnapshot, a int, epoch uint64) error {
	h := pc.heads[a]
	if h.pk == nil || h.epoch != snap.Epoch || snap.Epoch+1 != epoch {
		return nil
	}
	return pc.compareAB(snap.Snap, snap.Snap, a, h, fmt.Sprintf("epoch %d", h.epoch), "A", "a change at the position was not forwarded")
}

// compareAB checks that B at snapB holds A's row at snapA at actor a's position h;
// at, theA and what word its error.
func (pc *Check) compareAB(snapA, snapB *storage.Snapshot, a int, h headPos, at, theA, what string) error {
	key := memcmp.AppendKey(storage.AppendPrefix(nil, storage.TableUpstream, h.vnode), h.pk, pc.schema.PKDesc)
	va, err := get(snapA, key)
	if err != nil {
		return err
	}
	key = memcmp.AppendKey(storage.AppendPrefix(key[:0], storage.TableMV, h.vnode), h.pk, pc.schema.PKDesc)
	vb, err := get(snapB, key)
	if err != nil {
		return err
	}
	if !bytes.Equal(va, vb) {
		ra, _ := row.DecodeValue(nil, va)
		rb, _ := row.DecodeValue(nil, vb)
		return fmt.Errorf("progress check: %s, vnode %d: at actor %d's position pk %v, %s has %v but B has %v: %s",
			at, h.vnode, a, row.Row(h.pk), theA, row.Row(ra), row.Row(rb), what)
	}
	return nil
}

// get returns key's value in snap, nil when absent.
func get(snap *storage.Snapshot, key []byte) ([]byte, error) {
	v, closer, err := snap.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	return slices.Clone(v), nil
}

// Final checks that the state table at the job's end is the one the epoch
// batches wrote, row for row.
func (pc *Check) Final(snap *storage.Snapshot) error {
	if !Enabled {
		return nil
	}
	states, err := backfill.ReadStates(snap, len(pc.schema.PK))
	if err != nil {
		return fmt.Errorf("progress check: %w", err)
	}
	var want []backfill.VnodeState
	for v, ok := range pc.has {
		if ok {
			want = append(want, pc.table[v])
		}
	}
	for i := range max(len(states), len(want)) {
		switch {
		case i >= len(states):
			return fmt.Errorf("progress check: vnode %d's state row, written as %s, is missing from the state table", want[i].Vnode, describeState(want[i]))
		case i >= len(want) || states[i].Vnode != want[i].Vnode:
			return fmt.Errorf("progress check: the state table has a row for vnode %d that no epoch wrote", states[i].Vnode)
		case !samePos(states[i].Pos, want[i].Pos) || states[i].RowCount != want[i].RowCount || states[i].Finished != want[i].Finished:
			return fmt.Errorf("progress check: vnode %d: the state table has %s, but the epochs wrote %s", want[i].Vnode, describeState(states[i]), describeState(want[i]))
		}
	}
	return nil
}

func samePos(a, b []row.Datum) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && row.Compare(a[i], b[i]) != 0 {
			return false
		}
	}
	return true
}

func describeState(st backfill.VnodeState) string {
	pos := "none"
	if st.Pos != nil {
		pos = row.Row(st.Pos).String()
	}
	return fmt.Sprintf("pos %s, rows %d, finished %v", pos, st.RowCount, st.Finished)
}
