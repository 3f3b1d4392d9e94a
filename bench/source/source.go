package source

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/stream"
)

// Config configures a source.
type Config struct {
	Workload        Workload
	Seed            uint64
	InitialRows     int64  // key ids [0, InitialRows) exist at version 1 before the job
	ChangesPerEpoch int    // 0: snapshot only
	LastChangeEpoch uint64 // epochs after it carry no changes (0: no end)
	Mix             Mix
	Keys            KeyPicker // where updates and deletes look for a key (nil: uniform)
	Burst           *Burst    // periodic delete bursts (nil: none)
	Front           bool      // emit each epoch's changes at its start instead of spread over it
	ChunkSize       int
	VnodeCount      int
	Par             int // actors; actor i owns storage.OwnedVnodes(i, Par, VnodeCount)
	// Positions, for Mix.Boundary, returns where the scans stand (appended to dst):
	// primary keys, the first heads of them each actor's latest. Called once per
	// epoch when its rows are read, before its barrier: with work-driven barriers the
	// scans are waiting then, so the positions, hence the changes, are the same in
	// every run. nil: no boundary changes.
	Positions func(dst [][]row.Datum) (pks [][]row.Datum, heads int)
}

// KeyPicker draws the key id from which an update or delete looks for a live key.
type KeyPicker interface {
	Pick(r *rand.Rand, n int64) int64 // an id in [0, n)
}

type uniformPicker struct{}

func (uniformPicker) Pick(r *rand.Rand, n int64) int64 { return r.Int64N(n) }

// Burst deletes, every Every epochs, a run of consecutive live keys (Fraction of the
// live keys) starting at a random id in the upper half of the id space: ahead of a
// scan in insertion order, so every rebuilt scan must skip the tombstones.
type Burst struct {
	Every    int
	Fraction float64
}

// Change is one generated change of a key id.
type Change struct {
	Op         stream.Op // Insert, Delete, or UpdateDelete (an update: old then new)
	ID         int64
	OldVersion uint32 // version before the change (0 for an insert)
	// Moved, for an update, means the primary key changes: the row moves from key
	// ID to the new key NewID (at version 1).
	Moved bool
	NewID int64
	// NewVersion, for an update, is the version the row becomes (0: OldVersion+1).
	// A boundary change sets it without advancing the key's version, so that a
	// replay, which cannot know the scan positions, rebuilds the same key state.
	NewVersion uint32
}

// Source owns A's key state: the current version of every key id (0: absent).
type Source struct {
	cfg      Config
	schema   *row.Schema
	versions []uint32
	live     int64
	owner    []int // vnode → actor
	vnoder   *storage.Vnoder
	keyBuf   []byte
	valBuf   []byte
	rowBuf   row.Row
	changes  []Change
	// Boundary changes: the positions read and the changes aimed at them.
	positions [][]row.Datum
	boundary  []Change
}

// New returns a source whose table holds the initial rows.
func New(cfg Config) (*Source, error) {
	if cfg.Workload == nil {
		return nil, fmt.Errorf("source: no workload")
	}
	if err := cfg.Mix.validate(); err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	if cfg.Keys == nil {
		cfg.Keys = uniformPicker{}
	}
	if b := cfg.Burst; b != nil && (b.Every < 1 || b.Fraction <= 0 || b.Fraction > 1) {
		return nil, fmt.Errorf("source: delete burst %+v: want Every ≥ 1 and Fraction in (0, 1]", *b)
	}
	if cfg.InitialRows < 0 || cfg.ChangesPerEpoch < 0 || cfg.ChunkSize <= 0 || cfg.Par <= 0 || cfg.VnodeCount < cfg.Par {
		return nil, fmt.Errorf("source: bad config %+v", cfg)
	}
	s := &Source{cfg: cfg, schema: cfg.Workload.Schema(), vnoder: storage.NewVnoder(cfg.Workload.Schema(), cfg.VnodeCount)}
	if err := s.schema.Validate(); err != nil {
		return nil, fmt.Errorf("source: workload %s: %w", cfg.Workload.Name(), err)
	}
	s.versions = make([]uint32, cfg.InitialRows, cfg.InitialRows+int64(cfg.ChangesPerEpoch)*16)
	for i := range s.versions {
		s.versions[i] = 1
	}
	s.live = cfg.InitialRows
	s.owner = make([]int, cfg.VnodeCount)
	for v := range s.owner {
		s.owner[v] = storage.OwnerOf(v, cfg.Par, cfg.VnodeCount)
	}
	return s, nil
}

// Live returns the number of keys in A.
func (s *Source) Live() int64 { return s.live }

// LoadInitial writes the initial rows of A in batches of batchRows, committed as it goes.
// It is setup, not part of a measured job.
func (s *Source) LoadInitial(db *pebble.DB, batchRows int) error {
	b := db.NewBatch()
	for id := int64(0); id < s.cfg.InitialRows; id++ {
		s.rowBuf = s.cfg.Workload.Row(s.rowBuf, s.cfg.Seed, id, 1)
		s.encode(s.rowBuf)
		if err := b.Set(s.keyBuf, s.valBuf, nil); err != nil {
			return err
		}
		if (id+1)%int64(batchRows) == 0 {
			if err := b.Commit(pebble.NoSync); err != nil {
				return fmt.Errorf("source: load A: %w", err)
			}
			b.Close()
			b = db.NewBatch()
		}
	}
	defer b.Close()
	return b.Commit(pebble.NoSync)
}

// encode sets keyBuf and valBuf to r's key and value in A.
func (s *Source) encode(r row.Row) {
	s.keyBuf = storage.AppendRowKey(s.keyBuf[:0], storage.TableUpstream, s.vnoder.Of(r), s.schema, r)
	s.valBuf = row.AppendValue(s.valBuf[:0], r)
}

// Generate draws n changes of epoch from (seed, epoch) and the current key state,
// and advances the state. Updates and deletes only touch keys that exist; when none
// exist they are skipped.
func (s *Source) Generate(epoch uint64, n int) []Change {
	if s.cfg.LastChangeEpoch > 0 && epoch > s.cfg.LastChangeEpoch {
		n = 0
	}
	r := epochRand(s.cfg.Seed, epoch)
	m := s.cfg.Mix
	total := m.Insert + m.Update + m.PKUpdate + m.Delete
	s.changes = s.changes[:0]
	for i := 0; i < n; i++ {
		x := r.Float64() * total
		if x < m.Insert {
			id := int64(len(s.versions))
			s.versions = append(s.versions, 1)
			s.live++
			s.changes = append(s.changes, Change{Op: stream.Insert, ID: id})
			continue
		}
		id, ok := s.pickLive(r)
		if !ok {
			continue
		}
		old := s.versions[id]
		switch {
		case x < m.Insert+m.Update:
			s.versions[id] = old + 1
			s.changes = append(s.changes, Change{Op: stream.UpdateDelete, ID: id, OldVersion: old})
		case x < m.Insert+m.Update+m.PKUpdate:
			to := int64(len(s.versions))
			s.versions[id] = 0
			s.versions = append(s.versions, 1)
			s.changes = append(s.changes, Change{Op: stream.UpdateDelete, ID: id, OldVersion: old, Moved: true, NewID: to})
		default:
			s.versions[id] = 0
			s.live--
			s.changes = append(s.changes, Change{Op: stream.Delete, ID: id, OldVersion: old})
		}
	}
	if b := s.cfg.Burst; b != nil && n > 0 && epoch%uint64(b.Every) == 0 && s.live > 0 {
		s.burst(r, int64(b.Fraction*float64(s.live)))
	}
	return s.changes
}

// boundaryVersion marks a version set by a boundary change (see Change.NewVersion).
const boundaryVersion = 1 << 31

// Boundary draws the changes of epoch aimed at the scan positions, on top of its
// generated changes (n of them): Mix.Boundary of n, at least one when n > 0, each an
// update of the row at a position, or of the key just below or just above it where
// the workload knows its neighbours, on keys that exist. Half of them aim at an
// actor's latest position, the one a merged scan's filter compares with. They set
// a version of their own and leave the key's version as it was (Change.NewVersion).
func (s *Source) Boundary(epoch uint64, n int) []Change {
	s.boundary = s.boundary[:0]
	ki, ok := s.cfg.Workload.(KeyIndex)
	if s.cfg.Mix.Boundary == 0 || s.cfg.Positions == nil || n == 0 || !ok {
		return nil
	}
	var heads int
	s.positions, heads = s.cfg.Positions(s.positions[:0])
	if len(s.positions) == 0 {
		return nil
	}
	r := epochRand(s.cfg.Seed^0xB0DA, epoch)
	k := max(1, int(s.cfg.Mix.Boundary*float64(n)+0.5))
	stride := ki.Stride()
	for range k {
		i := r.IntN(len(s.positions))
		if heads > 0 && r.IntN(2) == 0 {
			i = r.IntN(heads)
		}
		id, ok := ki.IDOf(s.positions[i])
		if !ok {
			continue
		}
		if stride > 0 {
			id += stride * int64(r.IntN(3)-1) // below, at or above
		}
		if id < 0 || id >= int64(len(s.versions)) || s.versions[id] == 0 {
			continue
		}
		s.boundary = append(s.boundary, Change{Op: stream.UpdateDelete, ID: id, OldVersion: s.versions[id], NewVersion: boundaryVersion | uint32(epoch)})
	}
	return s.boundary
}

// Replay advances the key state through epochs first..last exactly as Run did when
// it produced them, without writing anything: a recovered job's source resumes from
// the epoch after its last committed one, like a source re-reading from persisted
// offsets.
func (s *Source) Replay(ctx context.Context, first, last uint64) error {
	for e := first; e <= last; e++ {
		if e%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		s.Generate(e, s.cfg.ChangesPerEpoch)
	}
	return nil
}

// burst deletes up to k consecutive live ids from a random start in the upper half.
func (s *Source) burst(r *rand.Rand, k int64) {
	n := int64(len(s.versions))
	for id := n/2 + r.Int64N(n-n/2); id < n && k > 0; id++ {
		if old := s.versions[id]; old != 0 {
			s.versions[id] = 0
			s.live--
			k--
			s.changes = append(s.changes, Change{Op: stream.Delete, ID: id, OldVersion: old})
		}
	}
}

// pickLive picks a live key id: the picker's id, then the next live one after it. The
// choice depends only on the set of live ids, not on how it was reached, so a source
// rebuilt after a crash picks the same keys.
func (s *Source) pickLive(r *rand.Rand) (int64, bool) {
	if s.live == 0 {
		return 0, false
	}
	n := int64(len(s.versions))
	start := s.cfg.Keys.Pick(r, n)
	for i := int64(0); i < n; i++ {
		id := start + i
		if id >= n {
			id -= n
		}
		if s.versions[id] != 0 {
			return id, true
		}
	}
	return 0, false
}

// Router builds per-actor chunks of changes and writes the changes to A.
type Router struct {
	s        *Source
	builders []*chunkBuilder
	out      []chan<- stream.Message
	last     row.Row // the row of the last change routed
	moved    row.Row // the new row of a key-changing update
	// Key-changing updates routed since the last Barrier: split into a Delete and
	// an Insert for two actors, or kept whole as a pair for one.
	split, whole int
}

// NewRouter routes to out[i] for actor i.
func (s *Source) NewRouter(out []chan<- stream.Message) *Router {
	r := &Router{s: s, out: out}
	for range out {
		r.builders = append(r.builders, newChunkBuilder(s.cfg.ChunkSize, len(s.schema.Columns)))
	}
	return r
}

// Apply writes changes to A in w and routes them.
func (rt *Router) Apply(ctx context.Context, w *storage.Writes, changes []Change) error {
	s := rt.s
	for _, c := range changes {
		if c.Moved {
			if err := rt.move(ctx, w, c); err != nil {
				return err
			}
			continue
		}
		var err error
		switch c.Op {
		case stream.Insert:
			err = rt.emit(ctx, stream.Insert, c.ID, 1)
		case stream.Delete:
			err = rt.emit(ctx, stream.Delete, c.ID, c.OldVersion)
		case stream.UpdateDelete:
			// Both halves go to the same chunk: the pk, hence the vnode, is unchanged.
			to := c.NewVersion
			if to == 0 {
				to = c.OldVersion + 1
			}
			err = rt.emitPair(ctx, c.ID, c.OldVersion, to)
		default:
			err = fmt.Errorf("source: change of key id %d has op %v; want Insert, Delete or UpdateDelete", c.ID, c.Op)
		}
		if err != nil {
			return err
		}
		s.encode(rt.last)
		if c.Op == stream.Delete {
			w.Delete(s.keyBuf)
		} else {
			w.Set(s.keyBuf, s.valBuf)
		}
	}
	return nil
}

func (rt *Router) emit(ctx context.Context, op stream.Op, id int64, version uint32) error {
	s := rt.s
	s.rowBuf = s.cfg.Workload.Row(s.rowBuf, s.cfg.Seed, id, version)
	a := s.owner[s.vnoder.Of(s.rowBuf)]
	cb := rt.builders[a]
	rt.last = cb.add(op, s.rowBuf)
	if cb.full() {
		return rt.send(ctx, a)
	}
	return nil
}

func (rt *Router) emitPair(ctx context.Context, id int64, oldV, newV uint32) error {
	s := rt.s
	s.rowBuf = s.cfg.Workload.Row(s.rowBuf, s.cfg.Seed, id, oldV)
	a := s.owner[s.vnoder.Of(s.rowBuf)]
	cb := rt.builders[a]
	if cb.room() < 2 {
		if err := rt.send(ctx, a); err != nil {
			return err
		}
	}
	cb.add(stream.UpdateDelete, s.rowBuf)
	s.rowBuf = s.cfg.Workload.Row(s.rowBuf, s.cfg.Seed, id, newV)
	rt.last = cb.add(stream.UpdateInsert, s.rowBuf)
	if cb.full() {
		return rt.send(ctx, a)
	}
	return nil
}

// move routes an update that changes the primary key and writes it to A: the old
// row's key is deleted and the new row's set. When one actor owns both rows' vnodes
// the halves go to it as an update pair; otherwise the old row goes to its actor as
// a Delete and the new one to its actor as an Insert, as a hash dispatcher splits an
// update whose distribution key changes.
func (rt *Router) move(ctx context.Context, w *storage.Writes, c Change) error {
	s := rt.s
	s.rowBuf = s.cfg.Workload.Row(s.rowBuf, s.cfg.Seed, c.ID, c.OldVersion)
	s.encode(s.rowBuf)
	w.Delete(s.keyBuf)
	from := s.owner[s.vnoder.Of(s.rowBuf)]
	rt.moved = s.cfg.Workload.Row(rt.moved, s.cfg.Seed, c.NewID, 1)
	to := s.owner[s.vnoder.Of(rt.moved)]
	if from == to && rt.builders[from].room() < 2 {
		if err := rt.send(ctx, from); err != nil {
			return err
		}
	}
	del, ins := stream.UpdateDelete, stream.UpdateInsert
	if from != to {
		del, ins = stream.Delete, stream.Insert
		rt.split++
	} else {
		rt.whole++
	}
	rt.builders[from].add(del, s.rowBuf)
	if from != to && rt.builders[from].full() {
		if err := rt.send(ctx, from); err != nil {
			return err
		}
	}
	rt.last = rt.builders[to].add(ins, rt.moved)
	if rt.builders[to].full() {
		if err := rt.send(ctx, to); err != nil {
			return err
		}
	}
	s.encode(rt.last)
	w.Set(s.keyBuf, s.valBuf)
	return nil
}

func (rt *Router) send(ctx context.Context, actor int) error {
	c := rt.builders[actor].take()
	if c == nil {
		return nil
	}
	select {
	case rt.out[actor] <- stream.Message{Chunk: c}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Moves returns the key-changing updates routed since the last call, split into
// a Delete and an Insert for two actors and kept whole for one, and resets them.
func (rt *Router) Moves() (split, whole int) {
	split, whole, rt.split, rt.whole = rt.split, rt.whole, 0, 0
	return split, whole
}

// Barrier flushes every partial chunk, then sends b to every actor, in band.
func (rt *Router) Barrier(ctx context.Context, b *stream.Barrier) error {
	for a := range rt.out {
		if err := rt.send(ctx, a); err != nil {
			return err
		}
		select {
		case rt.out[a] <- stream.Message{Barrier: b}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Epoch is what the source hands the barrier collector for one epoch.
type Epoch struct {
	Barrier *stream.Barrier
	Batch   *pebble.Batch // A's changes
	Bytes   int64         // logical key+value bytes in Batch (one write per key)
	Changes int           // changes generated
	// Key-changing updates: split into a Delete and an Insert for two actors, or
	// kept whole as an update pair for one.
	SplitUpdates, WholeUpdates int
}

// Run is the source's loop: from epoch first on, it spreads each epoch's changes over
// the epoch, then injects the barrier and hands A's epoch batch to deliver.
// Time-driven (gate nil): an epoch lasts the injector's interval, and when finish
// is closed the rest of the epoch's changes go at once before the final barrier.
// Work-driven: an epoch lasts until every actor read its rows (the gate), the
// changes keep pace with the rows read, and the epoch in which every scan ended is
// the final one.
func (s *Source) Run(ctx context.Context, store *storage.Store, first uint64, inj *stream.Injector, gate *Gate, rt *Router, finish <-chan struct{}, deliver func(context.Context, Epoch) error) error {
	timer := time.NewTimer(0)
	defer timer.Stop()
	const slices = 20 // pacing steps per epoch
	inj.Start(time.Now())
	w := &storage.Writes{}
	for epoch := first; ; epoch++ {
		emitted := 0
		changes := s.Generate(epoch, s.cfg.ChangesPerEpoch)
		apply := func(target int) error {
			if target <= emitted {
				return nil
			}
			err := rt.Apply(ctx, w, changes[emitted:target])
			emitted = target
			return err
		}
		final := false
		for !final {
			target := len(changes)
			var ready bool
			var wait <-chan struct{}
			if gate != nil {
				ready, final = gate.state()
				if !s.cfg.Front {
					target = int(float64(len(changes)) * gate.progress())
				}
				wait = gate.wake
			} else {
				left := inj.Due().Sub(time.Now())
				if left > 0 && inj.Interval > 0 && !s.cfg.Front {
					target = int(float64(len(changes)) * (1 - float64(left)/float64(inj.Interval)))
				}
				ready = left <= 0
				if !ready {
					timer.Reset(min(left, max(inj.Interval/slices, time.Millisecond)))
				}
			}
			if err := apply(target); err != nil {
				return err
			}
			if ready {
				break
			}
			select {
			case <-timer.C:
			case <-wait:
			case <-finish:
				if gate == nil {
					final = true
				}
				finish = nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := apply(len(changes)); err != nil {
			return err
		}
		bc := s.Boundary(epoch, len(changes))
		if err := rt.Apply(ctx, w, bc); err != nil {
			return err
		}
		if gate != nil {
			gate.next()
		}
		bar := inj.Inject(epoch, time.Now(), final)
		// In key order, with one write per key, like the actors' parts. Sealed before
		// the barrier reaches an actor, whose next scan reads the epoch.
		w.Sort()
		store.Seal(epoch, w)
		if err := rt.Barrier(ctx, bar); err != nil {
			return err
		}
		b := store.DB.NewBatchWithSize(w.BatchSize())
		bytes, err := w.PutAll(b)
		if err != nil {
			b.Close()
			return err
		}
		// Scans read the sealed writes until the epoch commits: the next epoch's
		// are new ones.
		w = &storage.Writes{}
		split, whole := rt.Moves()
		if err := deliver(ctx, Epoch{Barrier: bar, Batch: b, Bytes: bytes, Changes: len(changes) + len(bc), SplitUpdates: split, WholeUpdates: whole}); err != nil {
			return err
		}
		if final {
			return nil
		}
	}
}
