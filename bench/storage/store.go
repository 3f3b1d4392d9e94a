package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/backfill-bench/backfill-bench/bench/compactsched"
	"github.com/backfill-bench/backfill-bench/bench/meterfs"
)

// Options configures the DB of one job.
type Options struct {
	FS           vfs.FS // the filesystem; it is wrapped in a meterfs.FS
	Dir          string // the DB directory within FS
	CacheSize    int64  // block cache bytes (default 64 MiB)
	MemTableSize uint64 // default 64 MiB; an epoch batch over half of it becomes a flushable batch
	// Memtables (the mutable one and those queued for flush) the DB holds before a
	// commit waits for a flush; default DefaultMemTables.
	MemTables int
	// The filesystem's throttle; one that is an object store's (ObjectStore) takes
	// the WAL away: a checkpoint flushes the memtable, and its sstables upload.
	Throttle *meterfs.Throttle
	Logger   *slog.Logger // Pebble's info and error messages (nil: discarded)

	// Checkpointed takes the WAL away as an object store does, without its uploads:
	// every checkpoint flushes the epoch's writes to L0 sstables, as the engine's
	// shared-buffer sync does. The memtables are its shared buffer: writes that fill
	// one between checkpoints flush earlier (a spill), and a full set stalls them.
	Checkpointed bool
	LSM          LSMOptions // zero fields keep Pebble's defaults
	// OffloadCompactions meters the CPU of compactions apart from the job's
	// (CompactionCPU), as the engine runs them on compactor nodes, not its own.
	OffloadCompactions bool
	// SerialCompactions starts compactions only at checkpoints: after a
	// checkpoint's flush the commit runs the compactions Pebble picks, one at a
	// time, until it picks none (compactsched.Gate), so that what they rewrite does
	// not depend on timing. Only with Checkpointed.
	SerialCompactions bool
	// CompactionGroups keeps the creating job's tables in a DB of their own
	// (groups.go), as the engine's compaction groups do. Checkpointed only.
	CompactionGroups bool
}

// LSMOptions shape Pebble's levels and compactions; a zero field keeps Pebble's
// default (in parentheses).
type LSMOptions struct {
	L0CompactionThreshold int   // L0 sublevels that make L0 compact (4)
	L0StopWritesThreshold int   // L0 sublevels at which writes stop (12)
	CompactionConcurrency int   // compactions running at once (1)
	LBaseMaxBytes         int64 // bytes the base level holds before it compacts down (64 MiB)
	// The sstable size compactions write to L0 and the base level, doubling every
	// second level below it, as the engine's target_file_size_base (Pebble's
	// default: 2 MiB in L0, doubling every level).
	TargetFileSize int64
	BlockSize      int    // every level's sstable data blocks, in bytes (4 KiB)
	Compression    string // every level's: a key of Compressions (Snappy)
}

// Compressions are the sstable compressions a profile can name.
var Compressions = map[string]*sstable.CompressionProfile{
	"none": sstable.NoCompression, "snappy": sstable.SnappyCompression,
	"zstd": sstable.ZstdCompression, "minlz": sstable.MinLZCompression,
}

// apply sets o's knobs on opts.
func (o LSMOptions) apply(opts *pebble.Options) {
	if o.L0CompactionThreshold > 0 {
		opts.L0CompactionThreshold = o.L0CompactionThreshold
	}
	if o.L0StopWritesThreshold > 0 {
		opts.L0StopWritesThreshold = o.L0StopWritesThreshold
	}
	if n := o.CompactionConcurrency; n > 0 {
		opts.CompactionConcurrencyRange = func() (int, int) { return n, n }
	}
	if o.LBaseMaxBytes > 0 {
		opts.LBaseMaxBytes = o.LBaseMaxBytes
	}
	if o.TargetFileSize > 0 {
		opts.TargetFileSizes[0] = o.TargetFileSize
		for i := 1; i < len(opts.TargetFileSizes); i++ {
			opts.TargetFileSizes[i] = o.TargetFileSize << ((i - 1) / 2)
		}
	}
	c := Compressions[o.Compression]
	for i := range opts.Levels {
		if o.BlockSize > 0 {
			opts.Levels[i].BlockSize = o.BlockSize
		}
		if c != nil {
			opts.Levels[i].Compression = func() *sstable.CompressionProfile { return c }
		}
	}
}

// DefaultMemTables is how many memtables a DB holds before a commit waits: 4 (256
// MiB at 64 MiB memtables) stands for the engine's shared buffer of sealed epochs.
const DefaultMemTables = 4

// Store is one job's DB.
type Store struct {
	DB     *pebble.DB // the upstream's group (every table's without CompactionGroups)
	FS     *meterfs.FS
	cache  *pebble.Cache
	latest atomic.Pointer[EpochSnapshot]

	mu         sync.Mutex
	recorded   uint64         // epoch of the last commit
	checkpoint *EpochSnapshot // of the last checkpoint (a synced commit)
	sealed     []sealedEpoch  // epochs sealed and not yet committed, oldest first

	bgErr  atomic.Pointer[error] // the first failed flush or compaction
	failed chan struct{}         // closed with the first such failure

	// Write stalls so far: how many, their total time, and when the current one
	// began (unix ns; 0: none); and the bytes of the commits that waited in one.
	stalls, stallNanos, stallFrom, stallBytes atomic.Int64
	// The same split by cause, indexed by stallKind; the current stall's cause.
	stallsBy, stallNanosBy [numStallKinds]atomic.Int64
	stallKind              atomic.Int32

	dbs    []*pebble.DB          // the compaction groups' DBs (DB is the first)
	meters []*compactsched.Meter // a group's each, when compactions are offloaded
	gates  []*compactsched.Gate  // a group's each, when compactions are serial

	objectStore bool // no WAL: a checkpoint is a flush

	serialFlushes bool              // checkpointed without an object store: see asyncFlush
	lastFlush     []<-chan struct{} // by group

	uploads    sync.WaitGroup // checkpoints' flushes going on in the background
	lastUpload *Upload        // the latest of them (s.mu)
	closing    chan struct{}  // closed by Close: the uploads stop waiting
	closed     sync.Once
}

// Open opens (or creates) the DB and takes a snapshot at its committed epoch, the
// newest that survived (at or after the last checkpoint).
func Open(o Options) (*Store, error) {
	if o.FS == nil {
		return nil, errors.New("storage: Options.FS is nil")
	}
	if o.CacheSize <= 0 {
		o.CacheSize = 64 << 20
	}
	if o.MemTableSize == 0 {
		o.MemTableSize = 64 << 20
	}
	if o.MemTables == 0 {
		o.MemTables = DefaultMemTables
	}
	if _, ok := Compressions[o.LSM.Compression]; !ok && o.LSM.Compression != "" {
		return nil, fmt.Errorf("storage: unknown compression %q (LSMOptions.Compression): want one of %s", o.LSM.Compression, strings.Join(slices.Sorted(maps.Keys(Compressions)), ", "))
	}
	s := &Store{FS: meterfs.Wrap(o.FS, o.Throttle), cache: pebble.NewCache(o.CacheSize), objectStore: o.Throttle.ObjectStore() || o.Checkpointed, closing: make(chan struct{}), failed: make(chan struct{})}
	s.serialFlushes = s.objectStore && !o.Throttle.ObjectStore()
	if o.SerialCompactions && !s.serialFlushes {
		s.cache.Unref()
		return nil, errors.New("storage: serial compactions need a checkpointed store (Options.Checkpointed) without an object store's throttle")
	}
	if o.SerialCompactions && o.OffloadCompactions {
		s.cache.Unref()
		return nil, errors.New("storage: compactions are either serial (Options.SerialCompactions) or offloaded (Options.OffloadCompactions), not both: each schedules them its own way")
	}
	if o.CompactionGroups && !s.objectStore {
		s.cache.Unref()
		return nil, errors.New("storage: compaction groups need a checkpointed store (Options.Checkpointed or an object store): a WAL per group would make an epoch's commit two syncs")
	}
	dirs := []string{o.Dir}
	if o.CompactionGroups {
		dirs = append(dirs, s.FS.PathJoin(o.Dir, JobGroupDir))
	}
	for _, dir := range dirs {
		db, err := pebble.Open(dir, s.options(o))
		if err != nil {
			for _, db := range s.dbs {
				db.Close()
			}
			s.cache.Unref()
			return nil, fmt.Errorf("storage: open %q: %w", dir, err)
		}
		s.dbs = append(s.dbs, db)
	}
	s.lastFlush = make([]<-chan struct{}, len(s.dbs))
	db := s.dbs[0]
	s.DB = db
	epoch, err := s.readCommittedEpoch()
	if err != nil {
		s.Close()
		return nil, err
	}
	// What a reopened DB holds is on disk: it is the first checkpoint. Its epoch is
	// the newest committed one that survived: the last checkpoint, or a later epoch
	// a clean close (it syncs the WAL, where there is one) or a memtable flush kept.
	s.publish(newEpochSnapshot(epoch, s.NewSnapshot()), true)
	return s, nil
}

// Close stops waiting for uploads, releases the latest snapshots and closes the DB.
func (s *Store) Close() error {
	s.closed.Do(func() { close(s.closing) })
	s.uploads.Wait()
	if e := s.latest.Swap(nil); e != nil {
		e.Release()
	}
	if s.checkpoint != nil {
		s.checkpoint.Release()
		s.checkpoint = nil
	}
	var err error
	for g := len(s.dbs) - 1; g >= 0; g-- {
		if e := s.dbs[g].Close(); e != nil && err == nil {
			err = e
		}
	}
	s.cache.Unref()
	return err
}

// options returns the Pebble options of one group's DB: each has its own
// listener's meter and compaction gate (Pebble numbers jobs per DB), and they
// share the store's filesystem, cache and stall counters.
func (s *Store) options(o Options) *pebble.Options {
	opts := &pebble.Options{
		FS:           s.FS,
		Cache:        s.cache,
		MemTableSize: o.MemTableSize,
		// The engine's shared buffer holds sealed epochs until they are flushed and
		// makes writes wait only when it is full; Pebble's default of 2 would stall
		// the commit after any epoch over half a memtable (a flushable batch).
		MemTableStopWritesThreshold: o.MemTables,
		FormatMajorVersion:          pebble.FormatNewest,
		DisableWAL:                  s.objectStore,
		Logger:                      Logger(o.Logger),
		EventListener: &pebble.EventListener{
			BackgroundError: func(err error) {
				if s.bgErr.CompareAndSwap(nil, &err) {
					close(s.failed)
				}
			},
			WriteStallBegin: func(info pebble.WriteStallBeginInfo) {
				kind := stallKindOf(info.Reason)
				s.stalls.Add(1)
				s.stallsBy[kind].Add(1)
				s.stallKind.Store(int32(kind))
				s.stallFrom.Store(time.Now().UnixNano())
			},
			WriteStallEnd: func() {
				if from := s.stallFrom.Swap(0); from != 0 {
					d := time.Now().UnixNano() - from
					s.stallNanos.Add(d)
					s.stallNanosBy[s.stallKind.Load()].Add(d)
				}
			},
		},
	}
	o.LSM.apply(opts)
	if s.serialFlushes {
		// One sstable per flush, whatever L0 holds when it runs (Pebble splits a
		// flush at L0's intervals, which compactions running meanwhile move): a
		// checkpoint's flush writes the same bytes in every run.
		opts.FlushSplitBytes = 0
	}
	if o.SerialCompactions {
		gate := compactsched.NewGate()
		s.gates = append(s.gates, gate)
		opts.Experimental.CompactionScheduler = gate
		opts.Experimental.ReadSamplingMultiplier = -1 // no read-triggered compactions: reads' timing would pick them
		stallBegin := opts.EventListener.WriteStallBegin
		opts.EventListener.WriteStallBegin = func(info pebble.WriteStallBeginInfo) {
			stallBegin(info)
			if stallKindOf(info.Reason) == stallL0 {
				// Spills between checkpoints filled L0: it compacts now rather
				// than never (the commit waiting is the one that would drain it).
				go gate.Drain()
			}
		}
	}
	if o.OffloadCompactions {
		s.meters = append(s.meters, compactsched.Offload(opts))
	}
	return opts
}

var committedEpochKey = append(AppendPrefix(nil, TableMeta, 0), "committed_epoch"...)

func (s *Store) readCommittedEpoch() (uint64, error) {
	v, closer, err := s.DB.Get(committedEpochKey)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("storage: read committed_epoch: %w", err)
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, fmt.Errorf("storage: committed_epoch has %d bytes, want 8", len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// CommitEpoch adds committed_epoch = epoch to b and commits it as one atomic batch,
// synced when sync is set (a checkpoint; on an object store, which has no WAL, the
// checkpoint flushes the memtable and uploads its sstables). It then publishes a
// snapshot at that epoch, which Latest returns until the next commit. b is closed.
func (s *Store) CommitEpoch(b *pebble.Batch, epoch uint64, sync bool) error {
	u, err := s.CommitEpochAsync(b, epoch, sync)
	if err != nil || u == nil {
		return err
	}
	select {
	case <-u.done:
		return nil
	case <-s.closing:
		return fmt.Errorf("storage: epoch %d: the store closed before its upload ended", epoch)
	}
}

// CommitEpochAsync is CommitEpoch, except that on an object store a checkpoint's
// flush and upload go on in the background, as the engine's uploader overlaps them
// with the next epochs: the epoch is committed (Latest, Committed) at once, and
// becomes the latest checkpoint, durable, when its upload ends. The Upload is nil
// when the commit was durable (or needed not be) at return. Uploads end in commit
// order.
func (s *Store) CommitEpochAsync(b *pebble.Batch, epoch uint64, sync bool) (*Upload, error) {
	defer b.Close()
	if err := b.Set(committedEpochKey, binary.BigEndian.AppendUint64(nil, epoch), nil); err != nil {
		return nil, err
	}
	u, err := s.commitAsync(b, epoch, true, sync)
	if err != nil {
		return nil, fmt.Errorf("storage: commit epoch %d: %w", epoch, err)
	}
	return u, nil
}

// commitAsync commits b, durable when sync at return or (object store, compactions not
// serial) when its Upload ends; publish: a snapshot at epoch, checkpoint once durable.
func (s *Store) commitAsync(b *pebble.Batch, epoch uint64, publish, sync bool) (*Upload, error) {
	if !sync || !s.objectStore || s.gates != nil {
		// With serial compactions a checkpoint flushes and compacts before the
		// commit returns, so that the next epoch's writes find them done.
		if err := s.commit(b, sync); err != nil {
			return nil, err
		}
		if publish {
			s.publish(newEpochSnapshot(epoch, s.NewSnapshot()), sync)
		}
		return nil, nil
	}
	touched, err := s.commitBatch(b, pebble.NoSync)
	if err != nil {
		return nil, err
	}
	flushed, err := s.asyncFlush(touched)
	if err != nil {
		return nil, fmt.Errorf("flush to the object store: %w", err)
	}
	var snap *EpochSnapshot
	if publish {
		snap = newEpochSnapshot(epoch, s.NewSnapshot())
		snap.refs.Add(1) // the upload's, until it ends
		s.publish(snap, false)
	}
	u := &Upload{done: make(chan struct{})}
	s.mu.Lock()
	prev := s.lastUpload
	s.lastUpload = u
	s.mu.Unlock()
	s.uploads.Add(1)
	go func() {
		defer s.uploads.Done()
		// One flush may take several memtables: the uploads end in commit order.
		for _, ch := range []<-chan struct{}{flushed, prev.Done()} {
			select {
			case <-ch:
			case <-s.closing: // a queued flush never ends once the DB closes
				if snap != nil {
					snap.Release()
				}
				return
			}
		}
		s.mu.Lock()
		if snap != nil {
			s.setCheckpoint(snap)
		}
		u.at = time.Now() // once readers can see the checkpoint
		s.mu.Unlock()
		close(u.done)
	}()
	return u, nil
}

// Upload is a checkpoint's flush to the object store, going on in the background.
type Upload struct {
	done chan struct{}
	at   time.Time // set before done closes
}

// Done is closed when the checkpoint is durable (at once for a nil Upload).
func (u *Upload) Done() <-chan struct{} {
	if u == nil {
		return closedChan
	}
	return u.done
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// At is when the checkpoint became durable; valid once Done is closed.
func (u *Upload) At() time.Time { return u.at }

// commit commits b, durably when durable: synced through the WAL, or on an object
// store flushed and uploaded.
func (s *Store) commit(b *pebble.Batch, durable bool) error {
	opt := pebble.NoSync
	if durable && !s.objectStore {
		opt = pebble.Sync
	}
	touched, err := s.commitBatch(b, opt)
	if err != nil {
		return err
	}
	if durable && s.objectStore {
		for _, g := range touched {
			if err := s.dbs[g].Flush(); err != nil {
				return fmt.Errorf("flush to the object store: %w", err)
			}
			if s.gates != nil {
				s.gates[g].Drain()
			}
		}
	}
	return nil
}

// asyncFlush starts the flush of the groups touched, returning a channel closed
// when every one has ended. With serial flushes a group's flush starts once its
// previous one ended (Pebble flushes the memtables queued when a flush begins
// together: bytes would depend on timing); groups flush apart, as the engine's
// uploader runs different syncs' uploads at once (uploader/mod.rs).
func (s *Store) asyncFlush(touched []int) (<-chan struct{}, error) {
	var chans []<-chan struct{}
	for _, g := range touched {
		if s.serialFlushes && s.lastFlush[g] != nil {
			select {
			case <-s.lastFlush[g]:
			case <-s.closing:
				return nil, errors.New("the store closed while the previous checkpoint flushed")
			}
		}
		ch, err := s.dbs[g].AsyncFlush()
		if err != nil {
			return nil, err
		}
		s.lastFlush[g] = ch
		chans = append(chans, ch)
	}
	if len(chans) == 1 {
		return chans[0], nil
	}
	all := make(chan struct{})
	go func() {
		for _, ch := range chans {
			select {
			case <-ch:
			case <-s.closing:
				return // as a flush queued when the DB closes: never ends
			}
		}
		close(all)
	}()
	return all, nil
}

// commitBatch commits b, counting its bytes as stalled when the commit waited in a
// write stall. Pebble charges the wait to the batch that met the stall; a job's
// epochs commit one at a time, so none waits behind it uncounted. A stall met by
// a flush (no batch) has time and no bytes.
func (s *Store) commitBatch(b *pebble.Batch, opt *pebble.WriteOptions) (touched []int, err error) {
	parts, err := s.split(b)
	if err != nil {
		return nil, err
	}
	// The job's group first: a reader that sees the upstream's epoch (committed_epoch
	// is the upstream's) sees the job's writes of it too.
	for g := len(parts) - 1; g >= 0; g-- {
		p := parts[g]
		if p == nil {
			continue
		}
		n := int64(p.Len()) // a large batch's contents go to the memtable queue in the commit
		if err == nil {
			if err = p.Commit(opt); err == nil {
				touched = append(touched, g)
				if st := p.CommitStats(); st.MemTableWriteStallDuration+st.L0ReadAmpWriteStallDuration > 0 {
					s.stallBytes.Add(n)
				}
			}
		}
		if p != b {
			p.Close()
		}
	}
	slices.Reverse(touched)
	return touched, err
}

// publish makes snap the latest snapshot (and the latest checkpoint's, if it is one)
// and drops the sealed writes it holds, in one step for ReadUncommitted.
func (s *Store) publish(snap *EpochSnapshot, checkpoint bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.latest.Swap(snap); old != nil {
		old.Release()
	}
	if checkpoint {
		snap.refs.Add(1)
		s.setCheckpoint(snap)
	}
	s.recorded = snap.Epoch
	n := 0
	for n < len(s.sealed) && s.sealed[n].epoch <= snap.Epoch {
		n++
	}
	s.sealed = slices.Delete(s.sealed, 0, n)
}

// setCheckpoint makes snap, whose reference it takes, the latest checkpoint unless
// a newer one is. s.mu must be held.
func (s *Store) setCheckpoint(snap *EpochSnapshot) {
	if s.checkpoint != nil && s.checkpoint.Epoch > snap.Epoch {
		snap.Release()
		return
	}
	if s.checkpoint != nil {
		s.checkpoint.Release()
	}
	s.checkpoint = snap
}

// sealedEpoch is one epoch's writes to A, sealed and not yet committed.
type sealedEpoch struct {
	epoch  uint64
	writes *Writes
}

// Seal publishes the writes to A of an epoch about to be committed (sorted, one per
// key, no longer changed by anyone) to ReadUncommitted, as the engine's shared
// buffer holds a sealed epoch before it is committed. The commit of the epoch
// drops them.
func (s *Store) Seal(epoch uint64, w *Writes) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if epoch > s.recorded {
		s.sealed = append(s.sealed, sealedEpoch{epoch, w})
	}
}

// ReadUncommitted returns what a read of epoch sees without waiting for its commit:
// the latest committed snapshot (which the caller must Release) and the sealed
// writes of the epochs after it up to epoch, oldest first, which overlay it.
func (s *Store) ReadUncommitted(epoch uint64) (*EpochSnapshot, []*Writes) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.Latest()
	var over []*Writes
	for _, se := range s.sealed {
		if se.epoch > snap.Epoch && se.epoch <= epoch {
			over = append(over, se.writes)
		}
	}
	return snap, over
}

// LatestCheckpoint returns the snapshot of the last checkpoint with a reference the
// caller must Release.
func (s *Store) LatestCheckpoint() *EpochSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checkpoint.refs.Add(1) // the store holds a reference while it is the latest
	return s.checkpoint
}

// LSM is the shape of the LSM at one moment, and its write stalls so far: what makes
// writes and reads slower as a table grows.
type LSM struct {
	L0Files        int64  // sstables in L0
	L0Sublevels    int32  // L0's sublevels: what a read of L0 merges
	CompactionDebt uint64 // bytes compactions must rewrite to reach the levels' targets
	Memtables      int64  // the mutable memtable and those queued for flush (large batches too)
	ReadAmp        int    // sstables and memtables a point read may visit
	Stalls         int64  // write stalls so far
	StallTime      time.Duration
	StallBytes     int64 // bytes of the commits that waited in a write stall, so far
	// The write stalls by cause: the memtables full, waiting for a flush, or L0
	// too deep, waiting for compactions. A stall counts under the cause it began
	// with (Pebble reports one reason per stall).
	MemTableStalls, L0Stalls       int64
	MemTableStallTime, L0StallTime time.Duration
}

// The causes of a write stall.
const (
	stallMemTable = iota
	stallL0
	numStallKinds
)

// stallKindOf reads the cause of a write stall from Pebble's reason: "memtable
// count limit reached" or "L0 file count limit exceeded".
func stallKindOf(reason string) int {
	if strings.Contains(reason, "L0") {
		return stallL0
	}
	return stallMemTable
}

// LSM returns the LSM's shape now and the write stalls so far.
func (s *Store) LSM() LSM {
	var l LSM
	for _, db := range s.dbs { // the groups': files, debt and memtables add up, a read visits one
		m := db.Metrics()
		l.L0Files += m.Levels[0].TablesCount
		l.L0Sublevels = max(l.L0Sublevels, m.Levels[0].Sublevels)
		l.CompactionDebt += m.Compact.EstimatedDebt
		l.Memtables += m.MemTable.Count
		l.ReadAmp = max(l.ReadAmp, m.ReadAmp())
	}
	return LSM{
		L0Files: l.L0Files, L0Sublevels: l.L0Sublevels, CompactionDebt: l.CompactionDebt,
		Memtables: l.Memtables, ReadAmp: l.ReadAmp, Stalls: s.stalls.Load(), StallTime: time.Duration(s.stallNanos.Load()),
		StallBytes:     s.stallBytes.Load(),
		MemTableStalls: s.stallsBy[stallMemTable].Load(), MemTableStallTime: time.Duration(s.stallNanosBy[stallMemTable].Load()),
		L0Stalls: s.stallsBy[stallL0].Load(), L0StallTime: time.Duration(s.stallNanosBy[stallL0].Load()),
	}
}

// CompactionCPU is the CPU time compactions have used so far when they are
// offloaded (Options.OffloadCompactions), and 0 otherwise: see compactsched.Meter for
// what it counts.
func (s *Store) CompactionCPU() (time.Duration, error) {
	var sum time.Duration
	for _, m := range s.meters {
		d, err := m.Total()
		if err != nil {
			return 0, err
		}
		sum += d
	}
	return sum, nil
}

// Err returns the first error of a background flush or compaction, or nil. Pebble
// retries those forever, so a job must stop on its own when one fails.
func (s *Store) Err() error {
	if p := s.bgErr.Load(); p != nil {
		return fmt.Errorf("storage: background flush or compaction failed: %w", *p)
	}
	return nil
}

// Failed is closed when a background flush or compaction has failed (Err says
// how): a job waits on it instead of polling Err, which would do more work the
// slower the machine.
func (s *Store) Failed() <-chan struct{} { return s.failed }

// Clear deletes every row of tables in one synced batch, at the committed epoch,
// and republishes the latest snapshot without them.
func (s *Store) Clear(tables ...TableID) error {
	b := s.DB.NewBatch()
	defer b.Close()
	for _, t := range tables {
		lo, hi := TableBounds(t)
		if err := b.DeleteRange(lo, hi, nil); err != nil {
			return err
		}
	}
	if err := s.commit(b, true); err != nil {
		return fmt.Errorf("storage: clear tables: %w", err)
	}
	s.publish(newEpochSnapshot(s.Committed(), s.NewSnapshot()), true)
	return nil
}

// Committed returns the last committed epoch.
func (s *Store) Committed() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recorded
}

// Latest returns the snapshot of the last committed epoch with a reference the caller
// must Release.
func (s *Store) Latest() *EpochSnapshot {
	for {
		e := s.latest.Load()
		if e.tryAcquire() {
			return e
		}
	}
}

// WaitForCompactions waits, at most max, until no compaction runs and no level asks
// for one, so write-amplification figures include the compactions a job caused.
func (s *Store) WaitForCompactions(ctx context.Context, max time.Duration) {
	for _, g := range s.gates {
		g.Drain() // they start only when asked
	}
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		settled := true
		for _, db := range s.dbs {
			m := db.Metrics()
			settled = settled && m.Compact.NumInProgress == 0
			for i := range m.Levels {
				if m.Levels[i].Score > 1.05 {
					settled = false
				}
			}
		}
		if settled {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// EpochSnapshot is a Pebble snapshot of one committed epoch, reference counted so
// that the scans reading it keep it open after newer epochs commit.
type EpochSnapshot struct {
	Epoch uint64
	Snap  *Snapshot
	refs  atomic.Int64
}

func newEpochSnapshot(epoch uint64, snap *Snapshot) *EpochSnapshot {
	e := &EpochSnapshot{Epoch: epoch, Snap: snap}
	e.refs.Store(1)
	return e
}

func (e *EpochSnapshot) tryAcquire() bool {
	for {
		n := e.refs.Load()
		if n == 0 {
			return false
		}
		if e.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release drops a reference; the last one closes the snapshot.
func (e *EpochSnapshot) Release() {
	if e.refs.Add(-1) == 0 {
		e.Snap.Close()
	}
}

// Logger adapts l (nil: discard) to Pebble's logger: info at debug level, errors at
// error level, and a panic on Pebble's fatal errors.
func Logger(l *slog.Logger) pebble.Logger { return pebbleLogger{l} }

type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	if p.l != nil {
		p.l.Debug(fmt.Sprintf(format, args...), "from", "pebble")
	}
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	if p.l != nil {
		p.l.Error(fmt.Sprintf(format, args...), "from", "pebble")
	}
}

// Fatalf is called by Pebble on unrecoverable errors (a failed WAL write); it must
// not return, and a panic here names the cause instead of exiting silently.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble fatal: "+format, args...))
}
