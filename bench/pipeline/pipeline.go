// Package pipeline runs one backfill job end to end: it loads table A, runs the
// source, the actors and the barrier collector, and verifies the MV equals A.
package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/backfill-bench/backfill-bench/bench/backfill"
	"github.com/backfill-bench/backfill-bench/bench/creatingjob"
	"github.com/backfill-bench/backfill-bench/bench/meterfs"
	"github.com/backfill-bench/backfill-bench/bench/progresscheck"
	"github.com/backfill-bench/backfill-bench/bench/ratestep"
	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/source"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/stream"
	"github.com/backfill-bench/backfill-bench/bench/verify"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/scankind"
	"github.com/backfill-bench/backfill-bench/internal/callgrind"
	"github.com/backfill-bench/backfill-bench/internal/extrawork"
	"github.com/backfill-bench/backfill-bench/workloads"
)

// Config configures a job. Start from Default: zero numeric fields take its values,
// except ChangesPerSecond (0: a snapshot-only job) and SnapshotRateLimit (0: none).
type Config struct {
	Workload        string // a workloads spec: "narrow", "bid+zipfian+tombstone", …
	Rows            int64  // initial rows of A
	Seed            uint64 // the change stream and row contents derive from it
	Par             int    // backfill actors
	Vnodes          int    // vnode count
	BarrierInterval time.Duration
	// BarrierRows, when > 0, cuts epochs by work instead of time: a barrier after
	// every BarrierRows snapshot rows read by all actors together (each actor reads
	// its share, then waits for the barrier), so every run does identical work.
	BarrierRows         int64
	CheckpointFrequency int // every n-th barrier syncs
	ChunkSize           int
	Scan                backfill.Scan
	Read                backfill.Read // what a scan reopened after a barrier reads
	Persist             bool
	ChangesPerSecond    float64    // upstream changes/s of a time-driven job; 0: a snapshot-only job
	ChangesPerEpoch     int64      // when > 0, the changes of every epoch (instead of ChangesPerSecond)
	Mix                 source.Mix // zero: the workload's own
	FrontLoaded         bool       // each epoch's changes at its start, not spread over it
	ChangeEpochs        int        // epochs of the job that carry changes (0: all)
	SnapshotRateLimit   float64    // snapshot rows/s per actor; 0: unlimited
	SnapshotRateLimits  []float64  // per actor, where > 0 overriding SnapshotRateLimit
	SnapshotRateStep    RateStep   // a change of every actor's limit mid-job (zero: none)
	// Snapshot scan: rebuild the snapshot's iterators every RebuildRows rows read by an
	// actor (0: not by rows) or RebuildInterval (Default: 600 s; negative: not by time).
	RebuildRows     int64
	RebuildInterval time.Duration
	// CreatingDelay, if set, is called before a creating-job barrier reaches actor
	// (snapshot scan): a test's way to slow the creating job alone.
	CreatingDelay func(actor int, b *stream.Barrier)

	// OnEvent, if set, is called at the points a crash test stops a job at, from the
	// goroutine at that point (so concurrently): it must be safe for that.
	OnEvent func(Event)
	// RecordEpochs, if set, records the epoch batches committed, for baseline.Replay.
	RecordEpochs EpochRecorder

	FS           vfs.FS // nil: a fresh in-memory FS
	Dir          string // DB directory in FS (default "/db")
	CacheSize    int64
	MemTableSize uint64
	MemTables    int // memtables held before a commit waits (0: storage.DefaultMemTables)
	Throttle     *meterfs.Throttle
	Logger       *slog.Logger  // nil: discard
	SettleWait   time.Duration // bound on the untimed wait for compactions (default 5s)

	// No WAL: a checkpoint flushes the memtable to L0 (storage.Options.Checkpointed).
	Checkpointed bool
	LSM          storage.LSMOptions
	// Compactions' CPU is measured apart and left out of the job's (Result.CPU,
	// EpochTrace.CPU), as the engine runs them on compactor nodes.
	OffloadCompactions bool
	// SerialCompactions: compactions run only at checkpoints, to completion
	// (storage.Options.SerialCompactions).
	SerialCompactions bool
	// The creating job's tables in a DB of their own (storage.Options.CompactionGroups).
	CompactionGroups bool
}

// Default returns the engine's defaults (the original engine's) with the narrow workload.
func Default() Config {
	return Config{
		Workload:            "narrow",
		Rows:                200_000,
		Seed:                1,
		Par:                 2,
		Vnodes:              storage.DefaultVnodes,
		BarrierInterval:     time.Second,
		CheckpointFrequency: 1,
		ChunkSize:           1024,
		ChangesPerSecond:    10_000,
		RebuildInterval:     DefaultRebuildInterval,
		Dir:                 "/db",
		SettleWait:          5 * time.Second,
	}
}

// DefaultRebuildInterval is the engine's snapshot_iter_rebuild_interval_secs (600).
const DefaultRebuildInterval = 600 * time.Second

func (c *Config) fill() error {
	d := Default()
	if c.RebuildInterval == 0 {
		c.RebuildInterval = d.RebuildInterval
	}
	if c.Workload == "" {
		c.Workload = d.Workload
	}
	if c.Par == 0 {
		c.Par = d.Par
	}
	if c.Vnodes == 0 {
		c.Vnodes = d.Vnodes
	}
	if c.BarrierInterval == 0 {
		c.BarrierInterval = d.BarrierInterval
	}
	if c.CheckpointFrequency == 0 {
		c.CheckpointFrequency = d.CheckpointFrequency
	}
	if c.ChunkSize == 0 {
		c.ChunkSize = d.ChunkSize
	}
	if c.Dir == "" {
		c.Dir = d.Dir
	}
	if c.SettleWait == 0 {
		c.SettleWait = d.SettleWait
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case c.Rows < 0:
		return fmt.Errorf("rows %d: must be ≥ 0", c.Rows)
	case c.Par < 1:
		return fmt.Errorf("par %d: must be ≥ 1", c.Par)
	case c.Vnodes < c.Par || c.Vnodes > 1<<16:
		return fmt.Errorf("vnodes %d: must be in [par=%d, 65536]", c.Vnodes, c.Par)
	case c.BarrierInterval < 0:
		return fmt.Errorf("barrier interval %v: must be > 0", c.BarrierInterval)
	case c.CheckpointFrequency < 1:
		return fmt.Errorf("checkpoint frequency %d: must be ≥ 1", c.CheckpointFrequency)
	case c.ChunkSize < 1:
		return fmt.Errorf("chunk size %d: must be ≥ 1", c.ChunkSize)
	case c.ChangeEpochs < 0:
		return fmt.Errorf("change epochs %d: must be ≥ 0", c.ChangeEpochs)
	case c.Scan < 0 || int(c.Scan) >= len(backfill.Scans):
		return fmt.Errorf("scan %d: unknown", c.Scan)
	case c.Read < 0 || int(c.Read) >= len(backfill.Reads):
		return fmt.Errorf("read mode %d: unknown", c.Read)
	case c.ChangesPerSecond < 0:
		return fmt.Errorf("changes per second %v: must be ≥ 0", c.ChangesPerSecond)
	case c.ChangesPerEpoch < 0 || c.BarrierRows < 0:
		return fmt.Errorf("changes per epoch %d, barrier rows %d: must be ≥ 0", c.ChangesPerEpoch, c.BarrierRows)
	}
	if err := c.checkRateLimits(); err != nil {
		return err
	}
	return nil
}

// EventKind says where a job is when Config.OnEvent is called.
type EventKind int

const (
	// EventSnapshotChunk: an actor has just emitted a chunk of snapshot rows.
	EventSnapshotChunk EventKind = iota
	// EventBeforeCommit: every part of an epoch is in (its barrier was injected and
	// collected), and its commit has not begun.
	EventBeforeCommit
	// EventCommitted: an epoch has just committed.
	EventCommitted
)

var eventNames = []string{"snapshot-chunk", "before-commit", "committed"}

func (k EventKind) String() string { return eventNames[k] }

// Event is a point in a running job.
type Event struct {
	Kind EventKind
	// Snapshot chunk events: snapshot rows emitted so far in this run, by every
	// actor; commit events: snapshot rows in this run's epochs up to this one.
	SnapshotRows   int64
	Epoch          uint64 // the epoch being committed (commit events)
	Checkpoint     bool   // the epoch syncs (commit events)
	Final          bool   // the epoch is the job's last (commit events)
	FinishedActors int    // actors whose scan had ended by the epoch (commit events)
}

// EpochTrace is what one committed epoch did.
type EpochTrace struct {
	Epoch    uint64
	Injected time.Time
	// Barrier injected → the epoch done: committed, and durable if a checkpoint's upload
	// went on in the background; done in order, as the engine completes barriers.
	Latency      time.Duration
	Checkpoint   bool
	SnapshotRows int64
	UpstreamRows int64         // changes received by the actors
	Changes      int64         // changes generated by the source
	CPU          time.Duration // process user+sys from the job's start to this commit
	// The direct cost of persisting progress: state rows written, their key+value
	// bytes, and the actors' time spent building and encoding them.
	StateRows  int64
	StateBytes int64
	StateTime  time.Duration
	// Where the epoch's time went: the actors' phases, summed over actors, and
	// the collector's building of the epoch batch and its commit.
	Phases        backfill.Phases
	Build, Commit time.Duration
	// On an object store, a checkpoint's upload after its commit (the next go on).
	Upload time.Duration
	// The epoch's scans: the most epochs an actor's read snapshot was behind the
	// epoch it read, and the writes to A the actors buffered for checkpoint reads.
	ReadLag  uint64
	Buffered int64
	// Snapshot scan, creating-job epochs: the upstream epoch whose change log the
	// epoch replayed (0: a snapshot-phase epoch), the iterator rebuilds in it, and
	// the upstream epochs sealed that its MV did not hold when it committed.
	Replayed uint64
	Rebuilds int
	Lag      int64
	// The LSM once the epoch committed, with the write stalls during the epoch (from
	// the previous commit to this one) in Stalls, StallTime and StallBytes, and
	// split by cause in MemTableStalls, L0Stalls and their times.
	LSM storage.LSM
}

// Committed is when the epoch was done.
func (e EpochTrace) Committed() time.Time { return e.Injected.Add(e.Latency) }

// LogicalBytes are key+value bytes put into epoch batches, per table; Log is the
// upstream's change log, which only a snapshot scan keeps.
type LogicalBytes struct{ Upstream, MV, State, Log int64 }

// Total is the sum over tables.
func (l LogicalBytes) Total() int64 { return l.Upstream + l.MV + l.State + l.Log }

// Data is the MV's and the upstream's bytes: the rows the job exists to write.
// Write amplification is over them alone, so that a state table's bytes count as a
// cost of the job and never as work it did.
func (l LogicalBytes) Data() int64 { return l.Upstream + l.MV }

// Result is what a job measured.
type Result struct {
	Wall         time.Duration // first epoch start to final commit
	Load         time.Duration // untimed setup: loading A and settling
	SnapshotRows int64
	UpstreamRows int64
	Epochs       []EpochTrace // the upstream's epochs (the job's, for coupled scans)
	Logical      LogicalBytes
	FS           meterfs.Stats // physical bytes written during the job (start to final commit): the hot path
	Settle       meterfs.Stats // physical bytes written by the untimed flush and compactions after it
	CPU          time.Duration // process user+sys during the job, less CompactCPU
	Allocs       uint64        // heap objects allocated during the job (the whole process)
	AllocBytes   uint64        // heap bytes allocated during the job
	FinalEpoch   uint64
	MVRows       int64 // rows in B (= rows in A) at the final epoch
	// Updates that changed the primary key: split into a Delete and an Insert
	// because the keys' actors differ, or kept whole as an update pair.
	SplitUpdates, WholeUpdates int64
	// For a recovered job: Reopen is the engine's part of Recover (opening the DB,
	// replaying the source, reading or clearing state), Recovery the time from
	// reopening until the scan emits its first row again (until the first commit
	// when no snapshot row was left), at RecoveredAt; both without the harness's
	// checks.
	Reopen, Recovery time.Duration
	RecoveredAt      time.Time
	// Resumed are the snapshot rows the persisted progress says were backfilled
	// before a recovery (0 with persist=off, which starts over).
	Resumed int64

	// Snapshot scan: the creating job's own epochs, in order (nil for the coupled
	// scans, whose creating job commits in the upstream's epochs).
	Creating []EpochTrace
	// With offloaded compactions, the compactions' CPU during the job (0 otherwise).
	CompactCPU time.Duration
}

// Rows is snapshot plus upstream rows processed.
func (r *Result) Rows() int64 { return r.SnapshotRows + r.UpstreamRows }

// RowsPerSec is the job's throughput.
func (r *Result) RowsPerSec() float64 { return float64(r.Rows()) / r.Wall.Seconds() }

// Regular are the epochs between the first (warm-up: it starts with the job) and
// the final one (drain); nil when there are fewer than three epochs.
func (r *Result) Regular() []EpochTrace {
	if len(r.Epochs) < 3 {
		return nil
	}
	return r.Epochs[1 : len(r.Epochs)-1]
}

// Steady is the job between the commit of its first epoch and that of its last
// regular one: the regular epochs' rows, time and CPU (a scan resumes after each
// commit, so commit to commit holds whole epochs).
type Steady struct {
	Epochs int
	Rows   int64
	Time   time.Duration
	CPU    time.Duration
}

// Steady returns the steady state of the job, zero without regular epochs.
func (r *Result) Steady() Steady {
	epochs := r.Epochs
	if r.Creating != nil { // the backfill's work is in the creating job's epochs
		epochs = r.Creating
	}
	if len(epochs) < 3 {
		return Steady{}
	}
	reg := epochs[1 : len(epochs)-1]
	first, last := epochs[0], reg[len(reg)-1]
	st := Steady{Epochs: len(reg), Time: last.Committed().Sub(first.Committed()), CPU: last.CPU - first.CPU}
	for _, e := range reg {
		st.Rows += e.SnapshotRows + e.UpstreamRows
	}
	return st
}

// BarrierLatency returns the q-quantile (0..1) of the latency of the given
// epochs' barriers, by the contract's rule (nearest rank).
func BarrierLatency(epochs []EpochTrace, q float64) time.Duration {
	ns := make([]float64, len(epochs))
	for i, e := range epochs {
		ns[i] = float64(e.Latency)
	}
	slices.Sort(ns)
	return time.Duration(contract.Quantile(ns, q))
}

// WriteAmp is physical bytes written during the job ÷ logical bytes of the MV and the
// upstream's changes (LogicalBytes.Data): the state table's are in the numerator only.
func (r *Result) WriteAmp() float64 { return r.amp(r.FS) }

// SettleWriteAmp is physical bytes written by the settle ÷ logical bytes of the MV
// and the upstream's changes.
func (r *Result) SettleWriteAmp() float64 { return r.amp(r.Settle) }

func (r *Result) amp(s meterfs.Stats) float64 {
	if r.Logical.Data() == 0 {
		return 0
	}
	return float64(s.TotalBytes()) / float64(r.Logical.Data())
}

// PersistBytes are the bytes persisting backfill progress added to a job, per
// category: the state rows' logical key+value bytes, and the state table's share
// of the physical bytes the job wrote to the WAL, to flushes and to compactions.
type PersistBytes struct{ Logical, WAL, Flush, Compaction int64 }

// Total is the sum over categories.
func (p PersistBytes) Total() int64 { return p.Logical + p.WAL + p.Flush + p.Compaction }

// Persist is what persisting state added to the job; zero without state rows
// (persist=off). A category's physical bytes are attributed to the state table by
// its share of the logical bytes committed during the job: every table's rows go
// through the same WAL records and sstables, so splitting them exactly would mean
// reading every file back. The share is close for the WAL (it holds the epoch
// batches as written, a few bytes of framing per entry aside) and for a flush of
// whole epochs; it overstates compactions, which drop the state rows that later
// epochs overwrote. The manifest and other files are not the state's and count
// for no one. The settle after the job (which re-compacts A too) is left out.
func (r *Result) Persist() PersistBytes {
	if r.Logical.State == 0 {
		return PersistBytes{}
	}
	share := func(c meterfs.Category) int64 {
		return int64(float64(r.FS.Bytes[c])*float64(r.Logical.State)/float64(r.Logical.Total()) + 0.5) // rounded
	}
	return PersistBytes{Logical: r.Logical.State, WAL: share(meterfs.WAL), Flush: share(meterfs.Flush), Compaction: share(meterfs.Compaction)}
}

// EpochRecorder records the epoch batches a job commits, in commit order: each
// batch's contents (copied before Add returns) and how it was committed.
type EpochRecorder interface {
	Add(e RecordedEpoch, repr []byte) error
}

// RecordedEpoch is how and when (At: from the job's start) an epoch batch was
// committed (a creating epoch's apart, with its MV's upstream epoch) and its rows.
type RecordedEpoch struct {
	Epoch, DataEpoch           uint64
	Creating, Checkpoint       bool
	SnapshotRows, UpstreamRows int64
	At                         time.Duration
}

// Job is a prepared job: A is loaded and settled.
type Job struct {
	cfg   Config
	wl    *workloads.Workload
	store *storage.Store
	src   *source.Source
	load  time.Duration
	ran   bool
	// Closed when every goroutine of Run has returned. Run can return before that:
	// a commit stalled behind a failed flush returns only once the disk recovers.
	stopped chan struct{}

	// A recovered job: its actors' persisted state by vnode (nil: start afresh), the
	// rows its MV holds, and how long the engine's part of recovery took.
	recovered bool
	resume    []backfill.VnodeState
	mvRows    int64
	reopen    time.Duration

	progress *progresscheck.Check // of the run
	// Tests only: edits each part an actor delivers, as an executor bug would.
	alterPart func(*backfill.Part)
}

// Prepare opens the DB and loads A. It is setup and is not measured.
func Prepare(ctx context.Context, cfg Config) (*Job, error) {
	start := time.Now()
	j, err := open(cfg, true)
	if err != nil {
		return nil, err
	}
	if err := j.loadA(ctx); err != nil {
		j.store.Close()
		return nil, err
	}
	j.load = time.Since(start)
	return j, nil
}

// Recover reopens, on cfg.FS, the DB of a job that stopped before its end (a crash,
// an error, a cancel) and readies it to run from committed_epoch + 1: the source
// replays its change stream up to the committed epoch, and the actors resume from
// their persisted state (persist=on) or start over on a cleared MV (persist=off).
// cfg must be the stopped job's, except Par, Scan, Read and the hooks; a new Par
// reassigns vnodes (the merged scan refuses it when an actor's vnodes disagree).
func Recover(ctx context.Context, cfg Config) (*Job, error) {
	if int(cfg.Scan) < len(backfill.Scans) && !cfg.Scan.Kind().Recovers {
		// Its state (per-vnode progress, creating_epoch and the change log) is
		// persisted, but resuming from it is not written yet.
		return nil, fmt.Errorf("pipeline: recover: scan=%s cannot recover yet: its creating job commits apart from the upstream and resuming it (snapshot phase or log phase) is not modelled; run crash and recovery tests with scan=%s", cfg.Scan, strings.Join(scankind.Recoverable(), " or "))
	}
	start := time.Now()
	j, err := open(cfg, false)
	if err != nil {
		return nil, err
	}
	if err := j.recover(ctx); err != nil {
		j.store.Close()
		return nil, err
	}
	j.reopen = time.Since(start)
	if j.resume != nil {
		// The changelog check at the end counts from the rows the MV holds now.
		// Counting them is the harness's work, not the engine's: untimed.
		if j.mvRows, err = countMV(j.store); err != nil {
			j.store.Close()
			return nil, err
		}
	}
	return j, nil
}

func (j *Job) recover(ctx context.Context) error {
	committed := j.store.Committed()
	if committed < loadEpoch {
		return fmt.Errorf("pipeline: recover: the DB in %s has committed epoch %d, before table A was loaded: prepare the job anew", j.cfg.Dir, committed)
	}
	j.recovered = true
	if err := j.src.Replay(ctx, loadEpoch+1, committed); err != nil {
		return err
	}
	if !j.cfg.Persist {
		if err := j.store.Clear(storage.TableMV, storage.TableState); err != nil {
			return fmt.Errorf("pipeline: recover: %w", err)
		}
		return nil
	}
	snap := j.store.Latest()
	defer snap.Release()
	states, err := backfill.ReadStates(snap.Snap, len(j.wl.Schema().PK))
	if err != nil {
		return fmt.Errorf("pipeline: recover: read the backfill state: %w", err)
	}
	j.resume = make([]backfill.VnodeState, j.cfg.Vnodes)
	for v := range j.resume {
		j.resume[v].Vnode = uint16(v)
	}
	for _, st := range states {
		if int(st.Vnode) >= j.cfg.Vnodes {
			return fmt.Errorf("pipeline: recover: a state row names vnode %d, but the job has %d vnodes", st.Vnode, j.cfg.Vnodes)
		}
		j.resume[st.Vnode] = st
	}
	return nil
}

func countMV(s *storage.Store) (int64, error) {
	snap := s.Latest()
	defer snap.Release()
	return verify.Count(snap.Snap, storage.TableMV)
}

// open opens (create: or creates) the DB of cfg and readies the source.
func open(cfg Config, create bool) (*Job, error) {
	if err := cfg.fill(); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if cfg.FS == nil {
		if !create {
			return nil, errors.New("pipeline: recover: Config.FS is nil; pass the stopped job's filesystem")
		}
		cfg.FS = vfs.NewMem()
	}
	if create {
		if err := cfg.FS.MkdirAll(cfg.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("pipeline: create %s: %w", cfg.Dir, err)
		}
	} else if _, err := cfg.FS.Stat(cfg.Dir); err != nil {
		return nil, fmt.Errorf("pipeline: recover: %w", err)
	}
	store, err := storage.Open(storage.Options{
		FS: cfg.FS, Dir: cfg.Dir, CacheSize: cfg.CacheSize, MemTableSize: cfg.MemTableSize, MemTables: cfg.MemTables,
		Throttle: cfg.Throttle, Checkpointed: cfg.Checkpointed, LSM: cfg.LSM, OffloadCompactions: cfg.OffloadCompactions,
		SerialCompactions: cfg.SerialCompactions, CompactionGroups: cfg.CompactionGroups, Logger: cfg.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	wl, err := workloads.Parse(cfg.Workload, cfg.Seed)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	mix, burst := wl.Mix()
	if cfg.Mix != (source.Mix{}) {
		mix, burst = cfg.Mix, nil
	}
	j := &Job{cfg: cfg, wl: wl, store: store}
	src, err := source.New(source.Config{
		Workload: wl, Seed: cfg.Seed, InitialRows: cfg.Rows,
		ChangesPerEpoch: cfg.changesPerEpoch(),
		Mix:             mix, Keys: wl, Burst: burst, Front: cfg.FrontLoaded,
		ChunkSize: cfg.ChunkSize, VnodeCount: cfg.Vnodes, Par: cfg.Par,
		LastChangeEpoch: lastChangeEpoch(cfg.ChangeEpochs),
		Positions:       func(dst [][]row.Datum) ([][]row.Datum, int) { return j.progress.Positions(dst) },
	})
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	j.src = src
	return j, nil
}

// changesPerEpoch is how many changes each epoch carries.
func (c Config) changesPerEpoch() int {
	switch {
	case c.ChangesPerEpoch > 0:
		return int(c.ChangesPerEpoch)
	case c.BarrierRows > 0:
		return 0 // a rate per second means nothing without a duration
	}
	return int(c.ChangesPerSecond * c.BarrierInterval.Seconds())
}

// loadEpoch is the epoch that commits the initial table; the job starts after it.
const loadEpoch = 1

func lastChangeEpoch(n int) uint64 {
	if n == 0 {
		return 0
	}
	return loadEpoch + uint64(n)
}

func (j *Job) loadA(ctx context.Context) error {
	extrawork.Load()
	if err := j.src.LoadInitial(j.store.DB, 4096); err != nil {
		return fmt.Errorf("pipeline: load A: %w", err)
	}
	b := j.store.DB.NewBatch()
	if err := j.store.CommitEpoch(b, loadEpoch, true); err != nil {
		return fmt.Errorf("pipeline: load A: %w", err)
	}
	// A lives in sstables before the job, as a real table would.
	if err := j.store.Flush(); err != nil {
		return fmt.Errorf("pipeline: flush A: %w", err)
	}
	j.store.WaitForCompactions(ctx, j.cfg.SettleWait)
	return ctx.Err()
}

// newProgressCheck starts the progress check of the job's run.
func (j *Job) newProgressCheck() (*progresscheck.Check, error) {
	return progresscheck.New(progresscheck.Config{Schema: j.wl.Schema(), Scan: j.cfg.Scan, Persist: j.cfg.Persist,
		Par: j.cfg.Par, Vnodes: j.cfg.Vnodes, Resume: j.resume, Store: j.store})
}

// Claim marks the job as run, for a run other than Run (the baselines: the same
// prepared DB, once), and returns its result holding the load time.
func (j *Job) Claim() (*Result, error) {
	if j.ran {
		return nil, errors.New("pipeline: a job runs once; Prepare another")
	}
	j.ran = true
	return &Result{Load: j.load}, nil
}

// CPU is the CPU time the process has used, less offloaded compactions' (as
// Result.CPU counts it).
func (j *Job) CPU() time.Duration { return jobCPU(j.store) }

// Settle flushes what the job left in the memtable and waits (bounded) for the
// compactions it causes (see settle). Untimed.
func (j *Job) Settle() error { return j.settle() }

// settle flushes what the job left in the memtable and waits (bounded) for the
// compactions it causes, so that physical bytes count everything the job's writes
// cost, not only the WAL. Untimed.
func (j *Job) settle() error {
	if err := j.store.Flush(); err != nil {
		return fmt.Errorf("pipeline: flush after the job: %w", err)
	}
	j.store.WaitForCompactions(context.Background(), j.cfg.SettleWait)
	return nil
}

// stalledCommitWait bounds how long Close waits for a commit that stalled behind a
// failed flush (see Run).
const stalledCommitWait = 30 * time.Second

// Close closes the DB. After Run stopped on a failed flush, it first waits (bounded)
// for the stalled commit, which ends when the disk recovers; if it does not, the DB
// is left open rather than closed under a running commit.
func (j *Job) Close() error {
	if j.stopped != nil {
		select {
		case <-j.stopped:
		case <-time.After(stalledCommitWait):
			return fmt.Errorf("pipeline: close: a commit is still stalled behind the failed flush after %v: the DB is left open", stalledCommitWait)
		}
	}
	return j.store.Close()
}

// Resumed are the snapshot rows a recovered job's persisted progress says were
// backfilled before the crash: the scan does not emit them again. 0 for a
// prepared job and with persist=off.
func (j *Job) Resumed() int64 {
	var n int64
	for _, st := range j.resume {
		n += st.RowCount
	}
	return n
}

// Store returns the job's DB, for inspection after Run.
func (j *Job) Store() *storage.Store { return j.store }

// Schema returns the schema of the job's tables.
func (j *Job) Schema() *row.Schema { return j.wl.Schema() }

// VerifyProgress checks, at the committed epoch of the job's DB, that B holds
// exactly the rows of A its persisted backfill state says were emitted
// (verify.Progress). It is checked after every crash.
func (j *Job) VerifyProgress() error {
	snap := j.store.Latest()
	defer snap.Release()
	if err := verify.Progress(snap, j.wl.Schema(), j.cfg.Vnodes); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	return nil
}

// Config returns the job's configuration with defaults filled in.
func (j *Job) Config() Config { return j.cfg }

// Run runs the job to its final barrier, verifies B == A, waits (untimed, bounded)
// for compactions to settle and returns the measurements.
func (j *Job) Run(ctx context.Context) (*Result, error) {
	if j.ran {
		return nil, errors.New("pipeline: a job runs once; Prepare another")
	}
	j.ran = true
	cfg := j.cfg
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	// Label the job's goroutines (and what they start) so a CPU profile can tell the
	// job from setup and settling: go tool pprof -tagfocus phase=job.
	defer pprof.SetGoroutineLabels(ctx)
	ctx = pprof.WithLabels(ctx, pprof.Labels("phase", "job"))
	pprof.SetGoroutineLabels(ctx)

	win := openWindow()
	defer win.Stop()
	res := &Result{Load: j.load}
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	allocs, allocBytes := mem.Mallocs, mem.TotalAlloc
	fsStart := j.store.FS.Stats()
	cpuStart := cpuTime()
	compactStart, err := j.store.CompactionCPU()
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	cpuStart -= compactStart
	start := time.Now()

	first := j.store.Committed()
	first++
	inputs := make([]chan stream.Message, cfg.Par)
	outs := make([]chan<- stream.Message, cfg.Par)
	for i := range inputs {
		inputs[i] = make(chan stream.Message, 16)
		outs[i] = inputs[i]
	}
	col := newCollector(cfg.Logger, j.store, cfg.Par, res, cfg.OnEvent, start, cpuStart)
	col.record = cfg.RecordEpochs
	col.netRows = j.mvRows
	if j.progress, err = j.newProgressCheck(); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	col.progress = j.progress
	j.progress.Alter = j.alterPart
	col.window = win
	col.lastLSM = j.store.LSM()              // stalls before the job (loading A) are not its epochs'
	var snapshotRows, firstEmit atomic.Int64 // firstEmit: ns after start, 0 until a row is emitted
	var gate *source.Gate
	var onFull func()
	if cfg.BarrierRows > 0 {
		gate = source.NewGate(cfg.Par, cfg.BarrierRows)
		onFull = gate.Full
	}
	var stepper *ratestep.Stepper
	var rateChange func() (float64, bool) // nil: the limits stay
	if cfg.SnapshotRateStep.Set() {
		stepper = ratestep.New(cfg.SnapshotRateStep)
		stepper.Start()
		defer stepper.Stop()
		rateChange = stepper.Change
	}
	onEmit := func(n int) {
		if stepper != nil {
			stepper.OnEmit(n)
		}
		if firstEmit.Load() == 0 {
			firstEmit.CompareAndSwap(0, max(1, int64(time.Since(start))))
		}
		if gate != nil {
			gate.Emitted(n)
		}
		if cfg.OnEvent != nil {
			cfg.OnEvent(Event{Kind: EventSnapshotChunk, SnapshotRows: snapshotRows.Add(int64(n))})
		}
	}
	finish := make(chan struct{})
	var exhausted atomic.Int64
	onExhausted := func() {
		if gate != nil {
			gate.Exhausted()
		}
		if exhausted.Add(1) == int64(cfg.Par) {
			close(finish)
		}
	}

	var wg sync.WaitGroup
	fail := func(err error) {
		if err != nil {
			cancel(err)
		}
	}
	srcOuts, srcFinish := outs, (<-chan struct{})(finish)
	if cfg.Scan.Kind().RunsCreatingJob {
		cj := creatingjob.New(cfg.Par, first-1, gate != nil, cfg.CheckpointFrequency)
		col.cj = cj
		if gate != nil {
			gate.SetAfterScans(cj.AfterScans)
			cj.SetWakeGate(gate.Wake)
		}
		srcFinish = cj.Finish()
		defer context.AfterFunc(ctx, cj.Wake)()
		srcOuts = cj.Start(ctx, &wg, creatingjob.Actors{
			DB: j.store.DB, Schema: j.wl.Schema(), Vnodes: cfg.Vnodes, Inputs: inputs,
			Delay: cfg.CreatingDelay, Deliver: col.deliverLog, Fail: fail,
		})
	}
	for a := 0; a < cfg.Par; a++ {
		lo, hi := storage.OwnedVnodes(a, cfg.Par, cfg.Vnodes)
		vnodes := make([]uint16, 0, hi-lo)
		for v := lo; v < hi; v++ {
			vnodes = append(vnodes, uint16(v))
		}
		var resume []backfill.VnodeState
		if j.resume != nil {
			resume = j.resume[lo:hi]
		}
		rate := cfg.SnapshotRateLimit
		if a < len(cfg.SnapshotRateLimits) && cfg.SnapshotRateLimits[a] > 0 {
			rate = cfg.SnapshotRateLimits[a]
		}
		var share int64
		if gate != nil {
			share = gate.Share(a)
		}
		ex, err := backfill.NewExecutor(backfill.Config{
			Actor: a, Vnodes: vnodes, Schema: j.wl.Schema(), VnodeCount: cfg.Vnodes,
			ChunkSize: cfg.ChunkSize, Scan: cfg.Scan, Read: cfg.Read, Persist: cfg.Persist, RateLimit: rate, Resume: resume, EpochRows: share,
			RebuildRows: cfg.RebuildRows, RebuildInterval: max(cfg.RebuildInterval, 0),
		}, j.progress.Hooks(a, backfill.Env{Store: j.store, Input: inputs[a], Deliver: col.deliverActor, OnExhausted: onExhausted, OnEmit: onEmit, OnFull: onFull, RateChange: rateChange,
			WaitCommitted: col.cj.WaitCommitted})) // a coupled scan has no cj and never calls it
		if err != nil {
			j.progress.Release() // the collector, which would, has not started
			return nil, fmt.Errorf("pipeline: %w", err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); fail(ex.Run(ctx)) }()
	}
	wg.Add(2)
	go func() { defer wg.Done(); fail(col.run(ctx)) }()
	go func() {
		defer wg.Done()
		inj := &stream.Injector{Interval: cfg.BarrierInterval, CheckpointFrequency: cfg.CheckpointFrequency}
		fail(j.src.Run(ctx, j.store, first, inj, gate, j.src.NewRouter(srcOuts), srcFinish, col.deliverSource))
	}()
	j.stopped = make(chan struct{})
	go func() { wg.Wait(); close(j.stopped) }()
	if err := j.awaitStop(); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if err := context.Cause(ctx); err != nil && !errors.Is(err, errJobDone) {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if !col.done {
		return nil, errors.New("pipeline: job stopped before its final barrier")
	}
	res.Wall = col.finalCommit.Sub(start)
	if j.recovered {
		res.Reopen, res.Resumed = j.reopen, j.Resumed()
		res.RecoveredAt = col.firstCommit
		if ns := firstEmit.Load(); ns > 0 {
			res.RecoveredAt = start.Add(time.Duration(ns))
		}
		res.Recovery = j.reopen + res.RecoveredAt.Sub(start)
	}
	compactEnd, err := j.store.CompactionCPU()
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	res.CPU = cpuTime() - compactEnd - cpuStart
	res.CompactCPU = compactEnd - compactStart
	fsJob := j.store.FS.Stats()
	res.FS = fsJob.Sub(fsStart)
	runtime.ReadMemStats(&mem)
	res.Allocs, res.AllocBytes = mem.Mallocs-allocs, mem.TotalAlloc-allocBytes
	res.FinalEpoch = col.finalEpoch

	snap := j.store.Latest()
	defer snap.Release()
	rows, err := verify.MV(snap.Snap, j.wl.Schema())
	if err != nil {
		return nil, fmt.Errorf("pipeline: epoch %d: %w", snap.Epoch, err)
	}
	if col.netRows != rows {
		return nil, fmt.Errorf("pipeline: epoch %d: MV verification: the changelog sent downstream nets to %d rows but A has %d: a row was emitted twice or deleted before it was emitted", snap.Epoch, col.netRows, rows)
	}
	res.MVRows = rows
	if cfg.Persist {
		// Rows read before a recovery count too.
		if err := verify.State(snap.Snap, j.wl.Schema(), cfg.Vnodes, res.SnapshotRows+j.Resumed()); err != nil {
			return nil, fmt.Errorf("pipeline: epoch %d: %w", snap.Epoch, err)
		}
		if err := j.progress.Final(snap.Snap); err != nil {
			return nil, fmt.Errorf("pipeline: epoch %d: %w", snap.Epoch, err)
		}
	}
	if err := j.settle(); err != nil {
		return nil, err
	}
	res.Settle = j.store.FS.Stats().Sub(fsJob)
	return res, nil
}

var errJobDone = errors.New("job done")

// awaitStop waits until Run's goroutines have returned, or a background flush or
// compaction has failed: Pebble stalls commits while the memtables wait for a flush
// and retries a failed flush forever, so the collector may be stuck in a commit until
// the disk recovers. Run's deferred cancel stops the others; Close waits for that commit.
// It waits on channels, not a polling ticker, so a job counted under callgrind does
// the same work however slowly it runs.
func (j *Job) awaitStop() error {
	select {
	case <-j.stopped:
		return nil
	case <-j.store.Failed():
		return j.store.Err()
	}
}

// jobCPU is the process's CPU time less the compactions' when they are offloaded.
func jobCPU(s *storage.Store) time.Duration {
	compact, _ := s.CompactionCPU() // an error is Run's to report, at the job's end
	return cpuTime() - compact
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// collector gathers each epoch's parts (the source's and every actor's), commits the
// epoch as one batch, and records its barrier latency.
type collector struct {
	log     *slog.Logger
	store   *storage.Store
	par     int
	res     *Result
	parts   chan any // source.Epoch or backfill.Part, in epoch order per producer
	onEvent func(Event)

	start           time.Time // the job's
	cpuStart        time.Duration
	lastLSM         storage.LSM // at the previous commit
	netRows         int64       // the changelog's inserts minus deletes, over all epochs
	done            bool
	firstCommit     time.Time
	finalEpoch      uint64
	finalCommit     time.Time
	uploads         []epochUpload    // checkpoints' uploads in the background, in commit order
	creatingUploads []epochUpload    // the creating job's, each of c.res.Creating[epoch]
	record          EpochRecorder    // nil: not recording
	cj              *creatingjob.Job // snapshot scan: the creating job's control (nil: a coupled scan)
	creatingPending EpochTrace       // the creating work not yet in an upstream epoch's trace
	progress        *progresscheck.Check

	window *callgrind.Window // the job's callgrind window: closed at the final commit
}

// epochUpload is the upload of the checkpoint of c.res.Epochs[epoch].
type epochUpload struct {
	epoch int
	*storage.Upload
}

func newCollector(log *slog.Logger, s *storage.Store, par int, res *Result, onEvent func(Event), start time.Time, cpuStart time.Duration) *collector {
	return &collector{log: log, store: s, par: par, res: res, parts: make(chan any, 4*(par+1)), onEvent: onEvent, start: start, cpuStart: cpuStart}
}

func (c *collector) deliverActor(ctx context.Context, p backfill.Part) error {
	select {
	case c.parts <- p:
		return nil
	case <-ctx.Done():
		p.Close()
		return context.Cause(ctx)
	}
}

func (c *collector) deliverSource(ctx context.Context, e source.Epoch) error {
	select {
	case c.parts <- e:
		return nil
	case <-ctx.Done():
		e.Batch.Close()
		return context.Cause(ctx)
	}
}

type pending struct {
	source *source.Epoch
	actors []backfill.Part
	logs   []creatingjob.LogPart // snapshot scan: the change log, from each tap
}

func (c *collector) deliverLog(ctx context.Context, l creatingjob.LogPart) error {
	select {
	case c.parts <- l:
		return nil
	case <-ctx.Done():
		l.Batch.Close()
		return context.Cause(ctx)
	}
}

// ready reports whether upstream epoch e has every part it commits with: the
// source's, and every actor's unless a snapshot scan's creating job runs apart
// from it, then every tap's change log.
func (c *collector) ready(e uint64, pe *pending) bool {
	if pe == nil || pe.source == nil {
		return false
	}
	if c.cj == nil {
		return len(pe.actors) >= c.par
	}
	coupled := c.cj.Coupled(e)
	return len(pe.logs) >= c.par && (!coupled || len(pe.actors) >= c.par)
}

func (c *collector) run(ctx context.Context) error {
	byEpoch := map[uint64]*pending{}
	defer func() {
		c.progress.Release()
		for _, p := range byEpoch {
			if p.source != nil {
				p.source.Batch.Close()
			}
			for _, a := range p.actors {
				a.Close()
			}
			for _, l := range p.logs {
				l.Batch.Close()
			}
		}
		if c.cj != nil {
			c.cj.Close()
		}
	}()
	next := c.store.Committed()
	next++
	for {
		var part any
		select {
		case part = <-c.parts:
		case <-ctx.Done():
			return nil
		}
		var epoch uint64
		switch p := part.(type) {
		case source.Epoch:
			epoch = p.Barrier.Epoch.Curr
			pe := getPending(byEpoch, epoch)
			pe.source = &p
		case backfill.Part:
			if p.Creating {
				if err := c.collectCreating(p); err != nil {
					return err
				}
				continue
			}
			epoch = p.Barrier.Epoch.Curr
			pe := getPending(byEpoch, epoch)
			pe.actors = append(pe.actors, p)
		case creatingjob.LogPart:
			pe := getPending(byEpoch, p.Epoch)
			pe.logs = append(pe.logs, p)
		}
		for {
			pe := byEpoch[next]
			if !c.ready(next, pe) {
				break
			}
			delete(byEpoch, next)
			final, err := c.commit(next, pe)
			if err != nil {
				return err
			}
			if final {
				if err := c.awaitUploads(ctx); err != nil {
					return err
				}
				return errJobDone
			}
			if c.cj != nil {
				c.cj.UpstreamCommitted(next)
			}
			next++
		}
	}
}

// awaitUploads waits, after the final commit, for the checkpoints' uploads that
// went on in the background, and then completes the epochs in order: an epoch is
// done once it committed, its upload ended and the epoch before it was done, so
// the job ends when its final checkpoint is durable.
func (c *collector) awaitUploads(ctx context.Context) error {
	for _, u := range c.creatingUploads {
		select {
		case <-u.Done():
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		e := &c.res.Creating[u.epoch]
		e.Latency = max(e.Latency, u.At().Sub(e.Injected)) // before the final checkpoint's end
	}
	if len(c.uploads) == 0 {
		return nil
	}
	for _, u := range c.uploads {
		select {
		case <-u.Done():
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		e := &c.res.Epochs[u.epoch]
		e.Upload = max(u.At().Sub(e.Committed()), 0)
	}
	var done time.Time
	for i := range c.res.Epochs {
		e := &c.res.Epochs[i]
		end := e.Committed().Add(e.Upload)
		if end.Before(done) {
			end = done
		}
		e.Latency, done = end.Sub(e.Injected), end
	}
	c.finalCommit = done
	return nil
}

func getPending(m map[uint64]*pending, e uint64) *pending {
	p := m[e]
	if p == nil {
		p = &pending{}
		m[e] = p
	}
	return p
}

// epochBatch builds the epoch's one atomic batch from its parts in key order: tables
// are numbered upstream < MV < state < meta, actors own ascending vnode ranges, and
// every part comes sorted (storage.Writes says why that matters). The parts' batches
// are closed.
func (c *collector) epochBatch(pe *pending) (*pebble.Batch, error) {
	slices.SortFunc(pe.actors, func(a, b backfill.Part) int { return cmp.Compare(a.Actor, b.Actor) })
	parts := []*pebble.Batch{pe.source.Batch}
	for _, a := range pe.actors {
		parts = append(parts, a.MV...)
	}
	for _, a := range pe.actors {
		parts = append(parts, a.State)
	}
	slices.SortFunc(pe.logs, func(a, b creatingjob.LogPart) int { return cmp.Compare(a.Actor, b.Actor) })
	for _, l := range pe.logs { // table ids: the log's is the last
		parts = append(parts, l.Batch)
	}
	return applyAll(c.store.DB, parts, 0)
}

// applyAll returns one batch of parts with extra bytes of room, sized at once
// (growing it part by part copies its bytes over and over); the parts are closed.
func applyAll(db *pebble.DB, parts []*pebble.Batch, extra int) (*pebble.Batch, error) {
	for _, p := range parts {
		extra += len(p.Repr())
	}
	b := db.NewBatchWithSize(extra)
	var err error
	for _, p := range parts {
		if err == nil {
			err = b.Apply(p, nil)
		}
		p.Close()
	}
	if err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

func (c *collector) commit(epoch uint64, pe *pending) (final bool, err error) {
	bar := pe.source.Barrier
	tr := EpochTrace{Epoch: epoch, Injected: bar.Injected, Checkpoint: bar.Checkpoint, Changes: int64(pe.source.Changes)}
	c.res.Logical.Upstream += pe.source.Bytes
	c.res.SplitUpdates += int64(pe.source.SplitUpdates)
	c.res.WholeUpdates += int64(pe.source.WholeUpdates)
	finished := 0
	for _, a := range pe.actors {
		tr.SnapshotRows += a.SnapshotRows
		tr.UpstreamRows += a.UpstreamRows
		c.res.Logical.MV += a.MVBytes
		c.res.Logical.State += a.StateBytes
		tr.StateRows += a.StateRows
		tr.StateBytes += a.StateBytes
		tr.StateTime += a.StateTime
		tr.Phases = tr.Phases.Add(a.Phases)
		tr.ReadLag = max(tr.ReadLag, a.ReadLag)
		tr.Buffered += a.Buffered
		c.netRows += a.NetRows
		if a.Finished {
			finished++
		}
	}
	if c.cj != nil {
		for _, l := range pe.logs {
			c.res.Logical.Log += l.Bytes
		}
		c.takePending(&tr)
	}
	ev := Event{Epoch: epoch, Checkpoint: bar.Checkpoint, Final: bar.Final, FinishedActors: finished, SnapshotRows: c.res.SnapshotRows + tr.SnapshotRows}
	if c.onEvent != nil {
		ev.Kind = EventBeforeCommit
		c.onEvent(ev)
	}
	if c.progress != nil {
		if err := c.progress.Commit(c.store, epoch, pe.actors); err != nil {
			return false, err
		}
	}
	built := time.Now()
	b, err := c.epochBatch(pe)
	pe.actors = nil
	pe.source = nil
	if err != nil {
		return false, fmt.Errorf("epoch %d: %w", epoch, err)
	}
	committing := time.Now()
	tr.Build = committing.Sub(built)
	if c.record != nil {
		if err := c.record.Add(RecordedEpoch{Epoch: epoch, Checkpoint: bar.Checkpoint, SnapshotRows: tr.SnapshotRows, UpstreamRows: tr.UpstreamRows, At: committing.Sub(c.start)}, b.Repr()); err != nil {
			b.Close()
			return false, err
		}
	}
	upload, err := c.store.CommitEpochAsync(b, epoch, bar.Checkpoint)
	if err != nil {
		return false, err
	}
	if upload != nil {
		c.uploads = append(c.uploads, epochUpload{len(c.res.Epochs), upload})
	}
	now := time.Now()
	tr.Commit = now.Sub(committing)
	if c.firstCommit.IsZero() {
		c.firstCommit = now
	}
	if c.onEvent != nil {
		ev.Kind = EventCommitted
		c.onEvent(ev)
	}
	tr.Latency = now.Sub(tr.Injected) // until awaitUploads, if uploads go on
	tr.CPU = jobCPU(c.store) - c.cpuStart
	lsm := c.store.LSM()
	tr.LSM = lsm
	tr.LSM.Stalls, tr.LSM.StallTime = lsm.Stalls-c.lastLSM.Stalls, lsm.StallTime-c.lastLSM.StallTime
	tr.LSM.StallBytes = lsm.StallBytes - c.lastLSM.StallBytes
	tr.LSM.MemTableStalls, tr.LSM.MemTableStallTime = lsm.MemTableStalls-c.lastLSM.MemTableStalls, lsm.MemTableStallTime-c.lastLSM.MemTableStallTime
	tr.LSM.L0Stalls, tr.LSM.L0StallTime = lsm.L0Stalls-c.lastLSM.L0Stalls, lsm.L0StallTime-c.lastLSM.L0StallTime
	c.lastLSM = lsm
	c.res.Epochs = append(c.res.Epochs, tr)
	c.log.Debug("epoch committed", "epoch", epoch, "latency", tr.Latency, "snapshot_rows", tr.SnapshotRows, "upstream_rows", tr.UpstreamRows, "final", bar.Final)
	c.res.SnapshotRows += tr.SnapshotRows
	c.res.UpstreamRows += tr.UpstreamRows
	if bar.Final {
		if finished < c.par {
			return false, fmt.Errorf("final epoch %d committed with unfinished actors", epoch)
		}
		c.window.Stop()
		c.done, c.finalEpoch, c.finalCommit = true, epoch, now
		return true, nil
	}
	return false, nil
}
