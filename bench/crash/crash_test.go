package crash

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/backfill"
	"github.com/backfill-bench/backfill-bench/bench/pipeline"
)

type combo struct {
	scan    backfill.Scan
	persist bool
}

var combos = []combo{{backfill.Merged, false}, {backfill.Merged, true}, {backfill.PerVnode, false}, {backfill.PerVnode, true}}

func (c combo) String() string { return fmt.Sprintf("scan=%v/persist=%v", c.scan, c.persist) }

func run(t *testing.T, cfg Config) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("crashes %v: %v", crashesOf(rep), err)
	}
	if len(rep.Crashes) != len(cfg.Points) {
		t.Fatalf("crashed %d times (%v), want %d: a crash point never came", len(rep.Crashes), rep.Crashes, len(cfg.Points))
	}
	if rep.Reemitted < 0 {
		t.Errorf("re-emitted %d rows: a recovery resumed from more rows than were emitted before its crash (%v)", rep.Reemitted, rep.Crashes)
	}
	return rep
}

func crashesOf(r *Report) []Crash {
	if r == nil {
		return nil
	}
	return r.Crashes
}

func finalCommit(ev pipeline.Event) bool { return ev.Final }

// TestReviewFailovers: the three fail-over points of the original review, for both
// scans and both persist modes. Run verifies B == A at the end of each; here, what
// was emitted again. Every barrier is a synced checkpoint and no unsynced data
// survives, so persist=on keeps exactly the rows of the committed epochs and emits
// again exactly the rest; persist=off keeps nothing and emits everything again.
func TestReviewFailovers(t *testing.T) {
	const rows = 4000
	for _, tc := range []struct {
		name  string
		point Point
		edit  func(*pipeline.Config)
	}{
		{"during-backfill", Point{Kind: pipeline.EventSnapshotChunk, AtRows: rows / 2}, nil},
		{"after-backfill-finished", Point{Kind: pipeline.EventCommitted, Match: finalCommit}, nil},
		{"after-some-actors-finished",
			Point{Kind: pipeline.EventCommitted, Match: func(ev pipeline.Event) bool { return ev.FinishedActors == 1 }},
			func(c *pipeline.Config) {
				// Actor 1 scans at a tenth of actor 0's rate, so actor 0 finishes first.
				c.SnapshotRateLimits = []float64{0, c.SnapshotRateLimit / 10}
				c.ChangesPerSecond = 1000
			},
		},
	} {
		for i, c := range combos {
			t.Run(tc.name+"/"+c.String(), func(t *testing.T) {
				t.Parallel()
				cfg := SmallJob(rows, c.scan, c.persist, uint64(10*i+1))
				if tc.edit != nil {
					tc.edit(&cfg)
				}
				rep := run(t, Config{Job: cfg, Points: []Point{tc.point}})
				cr, res := rep.Crashes[0], rep.Result
				if cr.Committed > cr.Emitted {
					t.Fatalf("the crash counted %d committed rows of %d emitted", cr.Committed, cr.Emitted)
				}
				kept := int64(0)
				if c.persist {
					kept = cr.Committed
					if cr.InFlight > 0 && res.Resumed == cr.InFlight {
						kept = cr.InFlight // the commit in flight at the cut landed
					}
				}
				if res.Resumed != kept {
					t.Errorf("recovery resumed from %d persisted rows, want %d (the committed epochs' rows: %d; with the commit in flight: %d)", res.Resumed, kept, cr.Committed, cr.InFlight)
				}
				if want := cr.Emitted - kept; rep.Reemitted != want {
					t.Errorf("re-emitted %d rows, want %d (%d emitted before the crash, %d kept)", rep.Reemitted, want, cr.Emitted, kept)
				}
				switch {
				case c.persist && tc.name == "after-backfill-finished" && (rep.Reemitted != 0 || res.SnapshotRows != 0):
					t.Errorf("a crash after the final commit re-emitted %d rows and scanned %d, want 0 and 0", rep.Reemitted, res.SnapshotRows)
				case !c.persist && res.SnapshotRows < rows:
					t.Errorf("persist=off scanned %d snapshot rows after recovery, want all %d or more", res.SnapshotRows, rows)
				}
			})
		}
	}
}

// TestCrashInEveryPhase loses power at each point of an epoch's life, keeping only
// synced data or some of the unsynced data too. With checkpoints every third
// barrier, the epochs after the last checkpoint may be lost: still consistent.
func TestCrashInEveryPhase(t *testing.T) {
	checkpoint := func(ev pipeline.Event) bool { return ev.Checkpoint && !ev.Final }
	notCheckpoint := func(ev pipeline.Event) bool { return !ev.Checkpoint }
	phases := []struct {
		name  string
		point Point
	}{
		{"mid-epoch", Point{Kind: pipeline.EventSnapshotChunk, AtRows: 1500}},
		{"before-commit", Point{Kind: pipeline.EventBeforeCommit, Nth: 4}},
		{"after-checkpoint-commit", Point{Kind: pipeline.EventCommitted, Nth: 2, Match: checkpoint}},
		{"after-non-checkpoint-commit", Point{Kind: pipeline.EventCommitted, Nth: 4, Match: notCheckpoint}},
	}
	for i, ph := range phases {
		for k, c := range combos {
			for _, unsynced := range []int{0, 60} {
				p := ph.point
				p.UnsyncedPercent = unsynced
				t.Run(fmt.Sprintf("%s/%v/unsynced=%d%%", ph.name, c, unsynced), func(t *testing.T) {
					t.Parallel()
					cfg := SmallJob(3000, c.scan, c.persist, uint64(100+10*i+k))
					cfg.CheckpointFrequency = 3
					run(t, Config{Job: cfg, Points: []Point{p}, Seed: uint64(unsynced + i)})
				})
			}
		}
	}
}

// TestCrashDuringRecovery loses power twice: during the job, then during the
// recovery from that crash.
func TestCrashDuringRecovery(t *testing.T) {
	for i, c := range combos {
		t.Run(c.String(), func(t *testing.T) {
			t.Parallel()
			run(t, Config{Job: SmallJob(4000, c.scan, c.persist, uint64(i+30)), Points: []Point{
				{Kind: pipeline.EventSnapshotChunk, AtRows: 1500},
				{Kind: pipeline.EventCommitted, Nth: 3},
			}})
		})
	}
}

// TestRescaleOnRecovery resumes a per-vnode backfill with other actor counts: each
// vnode carries its own state, so its new owner resumes it alone.
func TestRescaleOnRecovery(t *testing.T) {
	for _, tt := range []struct{ from, to int }{{2, 3}, {2, 1}, {4, 2}, {1, 4}} {
		for _, persist := range []bool{true, false} {
			t.Run(fmt.Sprintf("par=%d→%d/persist=%v", tt.from, tt.to, persist), func(t *testing.T) {
				t.Parallel()
				const rows = 4000
				cfg := SmallJob(rows, backfill.PerVnode, persist, uint64(40+tt.from*10+tt.to))
				cfg.Par = tt.from
				cfg.SnapshotRateLimit *= 2 / float64(tt.from)
				rep := run(t, Config{Job: cfg, RecoverPar: tt.to, Points: []Point{{Kind: pipeline.EventSnapshotChunk, AtRows: rows / 2}}})
				if persist && rep.Result.SnapshotRows >= rows {
					t.Errorf("re-read %d snapshot rows after rescaling at half of %d", rep.Result.SnapshotRows, rows)
				}
			})
		}
	}
}

// TestMergedRescale: the merged scan resumes with a par that splits each old actor's
// vnodes (they share one position), and refuses one that joins vnodes persisted at
// different positions, with an error that says what to do.
func TestMergedRescale(t *testing.T) {
	const rows = 4000
	cfg := SmallJob(rows, backfill.Merged, true, 50)
	t.Run("split 2→4", func(t *testing.T) {
		rep := run(t, Config{Job: cfg, RecoverPar: 4, Points: []Point{{Kind: pipeline.EventSnapshotChunk, AtRows: rows / 2}}})
		if rep.Result.SnapshotRows >= rows {
			t.Errorf("re-read %d snapshot rows after a crash at half of %d", rep.Result.SnapshotRows, rows)
		}
	})
	t.Run("join 2→1", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := Run(ctx, Config{Job: cfg, RecoverPar: 1, Points: []Point{{Kind: pipeline.EventSnapshotChunk, AtRows: rows / 2}}})
		if err == nil || !strings.Contains(err.Error(), "different progress") || !strings.Contains(err.Error(), "scan=per-vnode") {
			t.Fatalf("err = %v, want a refusal naming the per-vnode scan", err)
		}
	})
	t.Run("join 2→1 after the backfill finished", func(t *testing.T) {
		run(t, Config{Job: cfg, RecoverPar: 1, Points: []Point{{Kind: pipeline.EventCommitted, Match: finalCommit}}})
	})
}

// TestRandomCrashes loses power at 64 random points (kind, instant, unsynced data
// kept, checkpoint frequency, actors, rescale, read mode, sometimes twice), 16 per
// scan and persist mode. More: benchrun crashtest.
func TestRandomCrashes(t *testing.T) {
	const points = 64
	var crashes, ckpt10 atomic.Int64
	var byRead [2]atomic.Int64 // scenarios that crashed, per read mode
	var objectStore atomic.Int64
	t.Run("scenarios", func(t *testing.T) {
		for i := range points {
			c := combos[i%len(combos)]
			cfg := Random(uint64(i), 3000, c.scan, c.persist)
			t.Run(fmt.Sprintf("%v/seed=%d", c, i), func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				rep, err := Run(ctx, cfg)
				if err != nil {
					t.Fatalf("points %v, par %d→%d: %v", cfg.Points, cfg.Job.Par, cfg.RecoverPar, err)
				}
				crashes.Add(int64(len(rep.Crashes)))
				if cfg.Job.CheckpointFrequency == 10 && len(rep.Crashes) > 0 {
					ckpt10.Add(1)
				}
				if len(rep.Crashes) > 0 {
					byRead[cfg.Job.Read].Add(1)
					if cfg.Job.Throttle.ObjectStore() {
						objectStore.Add(1)
					}
				}
			})
		}
	})
	// A scenario whose point never comes finishes without a crash; most must crash,
	// or the test proves nothing about recovery.
	if n := crashes.Load(); n < points/2 {
		t.Errorf("%d power losses over %d scenarios, want at least %d", n, points, points/2)
	}
	if ckpt10.Load() == 0 {
		t.Error("no scenario crashed with a checkpoint every 10 barriers")
	}
	if objectStore.Load() == 0 {
		t.Error("no scenario crashed on an object store")
	}
	for r := range byRead {
		if byRead[r].Load() == 0 {
			t.Errorf("no scenario crashed with read=%v", backfill.Read(r))
		}
	}
}

func TestRandomIsDeterministic(t *testing.T) {
	a, b := Random(5, 1000, backfill.PerVnode, true), Random(5, 1000, backfill.PerVnode, true)
	if fmt.Sprint(a.Points, a.Job.Par, a.Job.CheckpointFrequency, a.RecoverPar, a.Job.Read) != fmt.Sprint(b.Points, b.Job.Par, b.Job.CheckpointFrequency, b.RecoverPar, b.Job.Read) {
		t.Errorf("Random(5) differs between calls: %v vs %v", a.Points, b.Points)
	}
}
