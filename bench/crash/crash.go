// Package crash runs a backfill job through power losses: it cuts the power at
// chosen points, keeps what a real disk would, recovers, and proves the result.
package crash

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/backfill-bench/backfill-bench/bench/backfill"
	"github.com/backfill-bench/backfill-bench/bench/meterfs"
	"github.com/backfill-bench/backfill-bench/bench/pipeline"
)

// Point is where a run loses power: at the first event of kind Kind that matches.
type Point struct {
	Kind pipeline.EventKind
	// AtRows, for snapshot-chunk points: crash once this many snapshot rows were
	// emitted in the run.
	AtRows int64
	// Nth, for commit points: crash at the Nth matching event (0 and 1: the first).
	Nth int
	// Match, if set, must accept the event as well.
	Match func(pipeline.Event) bool
	// UnsyncedPercent of the data written but not synced survives (0: none).
	UnsyncedPercent int
}

func (p Point) String() string {
	s := p.Kind.String()
	if p.Kind == pipeline.EventSnapshotChunk {
		s += fmt.Sprintf("@%drows", p.AtRows)
	} else if p.Nth > 1 {
		s += fmt.Sprintf("#%d", p.Nth)
	}
	if p.UnsyncedPercent > 0 {
		s += fmt.Sprintf("+%d%%unsynced", p.UnsyncedPercent)
	}
	return s
}

// Config is a job and the power losses it goes through.
type Config struct {
	Job pipeline.Config // its FS is replaced by a crashable in-memory one
	// Points are the crashes in order: the first during the job, each next one during
	// the recovery from the one before. A point that never comes ends the series.
	Points []Point
	// RecoverPar is the actors of the recovered runs (0: the job's), to rescale.
	RecoverPar int
	Seed       uint64 // draws which unsynced data survives
}

// Report is what happened.
type Report struct {
	Crashes     []Crash          // in order
	BeforeCrash time.Duration    // the first run, from its start to the first crash
	Result      *pipeline.Result // the run that finished, verified (B == A)
	// Reemitted are the snapshot rows emitted again after the recoveries: at each
	// crash, the rows emitted before it that its persisted progress did not keep.
	// A row the cutter had not yet counted when it cut (at most a chunk per actor,
	// never a committed one) is left out.
	Reemitted int64
}

// Crash is a power loss: the point asked for and the event it hit.
type Crash struct {
	Point     Point
	Event     pipeline.Event
	Emitted   int64 // snapshot rows the run had emitted when the power went
	Committed int64 // of those, the rows in epochs it had committed
	// The rows in committed epochs had the commit in flight at the cut (begun, its
	// end not yet reported) landed, or 0 with none in flight: the power loss may
	// keep that commit or not.
	InFlight int64
}

func (c Crash) String() string {
	return fmt.Sprintf("%s (epoch %d, %d snapshot rows)", c.Point, c.Event.Epoch, c.Event.SnapshotRows)
}

func (r *Report) last() Crash { return r.Crashes[len(r.Crashes)-1] }

// Total is the time from the job's start to its verified finish, counting the work
// up to the first crash, and the final reopen and run (not the harness's checks).
func (r *Report) Total() time.Duration {
	return r.BeforeCrash + r.Result.Reopen + r.Result.Wall
}

// errCrash stops a run whose filesystem was cloned at a crash point.
var errCrash = errors.New("power lost")

// Run prepares the job on a crashable filesystem and runs it through cfg.Points,
// recovering after each crash and checking that the committed state is consistent
// with the persisted progress. It returns an error when a run fails for another
// reason than a crash, or when recovery or the final verification fails.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	fs := vfs.NewCrashableMem()
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x6372617368))
	rep := &Report{}
	jc := cfg.Job
	var resumed int64 // rows the current run's persisted progress started from
	for i := 0; ; i++ {
		cut := &cutter{fs: fs, rng: rng}
		if i < len(cfg.Points) {
			cut.point = &cfg.Points[i]
		}
		jc.FS, jc.OnEvent = fs, cut.onEvent
		var job *pipeline.Job
		var err error
		if i == 0 {
			job, err = pipeline.Prepare(ctx, jc)
		} else if job, err = pipeline.Recover(ctx, jc); err == nil {
			if err = job.VerifyProgress(); err != nil {
				job.Close()
			} else {
				kept := job.Resumed()
				rep.Reemitted += resumed + rep.last().Emitted - kept
				resumed = kept
			}
		}
		if err != nil {
			if i == 0 {
				return rep, err
			}
			return rep, fmt.Errorf("recovery from the crash at %s: %w", rep.last(), err)
		}
		runCtx, cancel := context.WithCancelCause(ctx)
		cut.stop = cancel
		start := time.Now()
		res, err := job.Run(runCtx)
		cancel(nil)
		// After a crash the abandoned DB may complain on close; only the clone matters.
		closeErr := job.Close()
		if cut.clone == nil { // no crash: the job ran to its end
			if err == nil {
				err = closeErr
			}
			if err != nil {
				return rep, fmt.Errorf("run %d: %w", i+1, err)
			}
			rep.Result = res
			return rep, nil
		}
		if i == 0 {
			rep.BeforeCrash = cut.at.Sub(start)
		}
		rep.Crashes = append(rep.Crashes, Crash{Point: *cut.point, Event: cut.event, Emitted: cut.emitted, Committed: cut.committed, InFlight: cut.inFlight})
		if err == nil {
			return rep, fmt.Errorf("run %d finished after the crash at %s", i+1, rep.last())
		}
		fs = cut.clone
		if cfg.RecoverPar > 0 {
			jc.Par = cfg.RecoverPar
		}
	}
}

// cutter clones the filesystem at the first event that matches its point, which
// is what survives a power loss at that instant, and stops the run.
type cutter struct {
	point *Point
	fs    *vfs.MemFS
	rng   *rand.Rand
	stop  context.CancelCauseFunc

	mu    sync.Mutex
	seen  int
	clone *vfs.MemFS
	event pipeline.Event
	at    time.Time
	// The most snapshot rows events said were emitted, and were in committed
	// epochs, before the cut; and those of the commit in flight, if one is.
	emitted, committed, inFlight int64
}

// onEvent counts the emitted rows under the same lock as the cut: an actor reports
// its rows before it delivers them for commit, so every row a commit before the cut
// made durable is counted.
func (c *cutter) onEvent(ev pipeline.Event) {
	p := c.point
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.clone != nil {
		return
	}
	switch ev.Kind {
	case pipeline.EventSnapshotChunk:
		c.emitted = max(c.emitted, ev.SnapshotRows)
	case pipeline.EventBeforeCommit:
		c.inFlight = ev.SnapshotRows
	case pipeline.EventCommitted:
		c.committed, c.inFlight = ev.SnapshotRows, 0
	}
	if p == nil || ev.Kind != p.Kind || p.Match != nil && !p.Match(ev) {
		return
	}
	if p.Kind == pipeline.EventSnapshotChunk {
		if ev.SnapshotRows < p.AtRows {
			return
		}
	} else if c.seen++; c.seen < p.Nth {
		return
	}
	c.at = time.Now()
	c.clone = c.fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: p.UnsyncedPercent, RNG: c.rng})
	c.event = ev
	c.stop(errCrash)
}

// SmallJob is a job of rows rows over many short epochs with a busy change stream
// that stops after 40 epochs (so the scan ends even on a slow machine): the shape
// crash tests need, quick enough to run hundreds of times.
func SmallJob(rows int64, scan backfill.Scan, persist bool, seed uint64) pipeline.Config {
	cfg := pipeline.Default()
	cfg.Rows = rows
	cfg.Scan = scan
	cfg.Persist = persist
	cfg.Seed = seed
	cfg.Vnodes = 64
	cfg.BarrierInterval = 10 * time.Millisecond
	cfg.ChangesPerSecond = 5_000
	cfg.ChunkSize = 64
	cfg.SnapshotRateLimit = 20_000 // per actor: ~100 ms of scan for 4000 rows
	cfg.ChangeEpochs = 40
	cfg.SettleWait = 50 * time.Millisecond
	return cfg
}

// Random draws a crash scenario from seed for a small job of rows rows: actors,
// checkpoint frequency, one or two power losses (kind, instant, how much unsynced
// data survives), for a scan that recovers with a position per vnode (per-vnode)
// sometimes a rescale on recovery, the read mode, and sometimes an object store
// (no WAL: checkpoints flush) for the disk.
// The same seed gives the same scenario.
func Random(seed uint64, rows int64, scan backfill.Scan, persist bool) Config {
	r := rand.New(rand.NewPCG(seed, 0x72616e646f6d))
	job := SmallJob(rows, scan, persist, seed)
	job.Par = 1 + r.IntN(3)
	job.SnapshotRateLimit *= 2 / float64(job.Par)
	job.CheckpointFrequency = []int{1, 3, 10}[r.IntN(3)] // 10: the seed's era
	cfg := Config{Job: job, Seed: seed}
	if k := scan.Kind(); k.Recovers && !k.OnePositionPerActor && r.IntN(3) == 0 {
		cfg.RecoverPar = 1 + r.IntN(4)
	}
	for range 1 + r.IntN(4)/3 {
		p := Point{Kind: pipeline.EventKind(r.IntN(3))}
		if p.Kind == pipeline.EventSnapshotChunk {
			p.AtRows = 1 + r.Int64N(max(rows, 1))
		} else {
			p.Nth = 1 + r.IntN(12)
		}
		if r.IntN(2) == 0 {
			p.UnsyncedPercent = 1 + r.IntN(100)
		}
		cfg.Points = append(cfg.Points, p)
	}
	cfg.Job.Read = backfill.Read(r.IntN(len(backfill.Reads)))
	if r.IntN(3) == 0 {
		cfg.Job.Throttle = meterfs.NewThrottle(meterfs.ThrottleConfig{Upload: &meterfs.Upload{}})
	}
	return cfg
}
