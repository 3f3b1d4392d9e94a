package crash

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/backfill-bench/backfill-bench/bench/backfill"
	"github.com/backfill-bench/backfill-bench/bench/memcmp"
	"github.com/backfill-bench/backfill-bench/bench/pipeline"
	"github.com/backfill-bench/backfill-bench/bench/storage"
)

// TestSSTableWriteFault fails every sstable write from the third committed epoch on:
// the job stops with an error that says so (no panic, no hang), what was committed
// is consistent with the persisted progress, and once the fault clears a restart
// finishes with B == A.
func TestSSTableWriteFault(t *testing.T) {
	for i, c := range combos {
		t.Run(c.String(), func(t *testing.T) {
			t.Parallel()
			// Pebble treats a failed WAL write as fatal: fail sstables only.
			fault := &errorfs.Toggle{Injector: errorfs.ErrInjected.If(errorfs.And(errorfs.Writes, errorfs.PathMatch("/db/*.sst")))}
			cfg := SmallJob(20_000, c.scan, c.persist, uint64(60+i))
			cfg.FS = errorfs.Wrap(vfs.NewMem(), fault)
			cfg.MemTableSize = 256 << 10 // flushes during the job
			cfg.SnapshotRateLimit = 50_000
			commits := 0
			cfg.OnEvent = func(ev pipeline.Event) {
				if ev.Kind == pipeline.EventCommitted {
					if commits++; commits == 3 {
						fault.On()
					}
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			job, err := pipeline.Prepare(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = job.Run(ctx)
			if err == nil || !strings.Contains(err.Error(), "background flush or compaction failed") || !strings.Contains(err.Error(), "injected error") || ctx.Err() != nil {
				job.Close()
				t.Fatalf("run: err = %v, want the injected sstable write error, before the timeout", err)
			}
			t.Logf("the job stopped with: %v", err)
			fault.Off() // the disk is replaced
			if err := job.Close(); err != nil {
				t.Logf("close: %v", err)
			}
			job = recoverJob(ctx, t, cfg)
			if _, err := job.Run(ctx); err != nil { // verifies B == A
				t.Fatal(fmt.Errorf("restart: %w", err))
			}
		})
	}
}

// TestCleanReschedule stops a job without a crash (as a reschedule does: the actors
// stop, the DB closes cleanly) and starts it again from the same DB: it resumes
// from exactly the rows it had committed and finishes with B == A. The merged scan
// stops once most of its snapshot was committed; the per-vnode scan once an actor
// owns both finished and unfinished vnodes, which the restart must keep apart.
func TestCleanReschedule(t *testing.T) {
	const rows = 4000
	errReschedule := errors.New("rescheduled")
	for i, scan := range []backfill.Scan{backfill.Merged, backfill.PerVnode} {
		t.Run(scan.String(), func(t *testing.T) {
			t.Parallel()
			cfg := SmallJob(rows, scan, true, uint64(70+i))
			cfg.FS = vfs.NewMem()
			if scan == backfill.PerVnode {
				// Small chunks, so that vnodes of different sizes finish epochs apart
				// and some commit holds an actor with both kinds: with chunks as large
				// as a vnode, every vnode of an actor could finish in its last epoch.
				cfg.ChunkSize = 16
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			runCtx, stop := context.WithCancelCause(ctx)
			defer stop(nil)
			var job *pipeline.Job
			var stopped atomic.Bool
			// Snapshot rows committed when the job stopped: the collector may commit an
			// epoch that was complete before it sees the stop, so every commit counts.
			var committed int64
			var stopErr error
			cfg.OnEvent = func(ev pipeline.Event) { // commit events come from one goroutine
				if ev.Kind != pipeline.EventCommitted {
					return
				}
				committed = ev.SnapshotRows
				if ev.Final || stopped.Load() {
					return
				}
				ready := ev.SnapshotRows >= rows*4/5
				if scan == backfill.PerVnode {
					ready, stopErr = mixedActor(job, cfg)
				}
				if ready || stopErr != nil {
					stopped.Store(true)
					stop(errReschedule)
				}
			}
			job, err := pipeline.Prepare(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = job.Run(runCtx)
			if closeErr := job.Close(); closeErr != nil {
				t.Fatalf("close after the stop: %v", closeErr)
			}
			if stopErr != nil {
				t.Fatal(stopErr)
			}
			if !errors.Is(err, errReschedule) {
				t.Fatalf("run: err = %v, want the reschedule: the job ended before the stop point", err)
			}

			job = recoverJob(ctx, t, cfg)
			if got, want := job.Resumed(), committed; got != want {
				t.Errorf("resumed from %d persisted rows, want the %d committed before the stop", got, want)
			}
			res, err := job.Run(ctx) // verifies B == A and the state table
			if err != nil {
				t.Fatal(fmt.Errorf("restart: %w", err))
			}
			if res.Resumed+res.SnapshotRows < rows {
				t.Errorf("resumed %d + scanned %d snapshot rows, want at least the %d loaded", res.Resumed, res.SnapshotRows, rows)
			}
		})
	}
}

// TestResumeEpochAtCkpt10: with a checkpoint every tenth barrier only checkpoints
// sync, and a job resumes from the newest committed epoch that survived its stop:
// after a clean stop the last one committed (closing the DB syncs its WAL);
// after a power loss the last checkpoint (nothing else was synced); after a power
// loss that followed a memtable flush, the last epoch flushed. Each stop comes at
// the first epoch after a checkpoint, mid-backfill; B and the state verify after.
func TestResumeEpochAtCkpt10(t *testing.T) {
	const rows = 4000
	errStop := errors.New("stopped")
	for i, tc := range []struct {
		name         string
		crash, flush bool
		atLast       bool // resumes from the last epoch committed, else from the last checkpoint
	}{
		{"clean-stop", false, false, true},
		{"power-loss", true, false, false},
		{"flush-then-power-loss", true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			fs := vfs.NewCrashableMem()
			cfg := SmallJob(rows, backfill.Merged, true, uint64(110+i))
			cfg.FS, cfg.CheckpointFrequency = fs, 10
			// Epochs cut by work: the stop comes at the same epoch, mid-scan, on any machine.
			cfg.BarrierRows, cfg.ChangesPerEpoch, cfg.SnapshotRateLimit = 100, 20, 0
			runCtx, stop := context.WithCancelCause(ctx)
			defer stop(nil)
			var job *pipeline.Job
			// Set by the hook (commit events come from one goroutine), read after Run.
			var ckpt, last uint64 // the last checkpoint and the last epoch committed
			var clone *vfs.MemFS
			var stopErr error
			stopped := false
			cfg.OnEvent = func(ev pipeline.Event) {
				if ev.Kind != pipeline.EventCommitted || clone != nil {
					return
				}
				last = ev.Epoch
				if ev.Checkpoint {
					ckpt = ev.Epoch
				}
				if stopped || ev.Checkpoint || ckpt < 20 {
					return
				}
				stopped = true
				if ev.Final || ev.FinishedActors > 0 {
					stopErr = fmt.Errorf("epoch %d: a scan ended before the stop; lengthen the job", ev.Epoch)
				}
				if tc.flush {
					if err := job.Store().DB.Flush(); err != nil {
						stopErr = fmt.Errorf("flush at epoch %d: %w", ev.Epoch, err)
					}
				}
				if tc.crash {
					clone = fs.CrashClone(vfs.CrashCloneCfg{})
				}
				stop(errStop)
			}
			job, err := pipeline.Prepare(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = job.Run(runCtx)
			closeErr := job.Close()
			if stopErr != nil {
				t.Fatal(stopErr)
			}
			if !errors.Is(err, errStop) {
				t.Fatalf("run: err = %v, want the stop: the job ended before it", err)
			}
			if !tc.crash && closeErr != nil { // after a power loss only the clone matters
				t.Fatalf("close after the stop: %v", closeErr)
			}
			if last <= ckpt {
				t.Fatalf("the last epoch committed, %d, is the last checkpoint, %d: want a stop after it", last, ckpt)
			}
			want := ckpt
			if tc.atLast {
				want = last
			}
			if tc.crash {
				cfg.FS = clone
			}
			job = recoverJob(ctx, t, cfg)
			if got := job.Store().Committed(); got != want {
				t.Errorf("resumed from epoch %d, want %d (last checkpoint %d, last committed %d)", got, want, ckpt, last)
			}
			t.Logf("last checkpoint %d, last committed %d, resumed from %d (%d rows)", ckpt, last, job.Store().Committed(), job.Resumed())
			res, err := job.Run(ctx) // verifies B == A and the state table
			if err != nil {
				t.Fatal(fmt.Errorf("restart: %w", err))
			}
			if res.Resumed == 0 {
				t.Error("the restart resumed from no persisted rows, want those of the epoch it resumed from")
			}
		})
	}
}

// recoverJob reopens a stopped job's DB without its event hook and checks that
// what was committed is consistent with the persisted progress.
func recoverJob(ctx context.Context, t *testing.T, cfg pipeline.Config) *pipeline.Job {
	t.Helper()
	cfg.OnEvent = nil
	job, err := pipeline.Recover(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { job.Close() })
	if err := job.VerifyProgress(); err != nil {
		t.Fatal(err)
	}
	return job
}

// mixedActor reports whether an actor of the job owns both finished and unfinished
// vnodes in its committed state.
func mixedActor(job *pipeline.Job, cfg pipeline.Config) (bool, error) {
	snap := job.Store().Latest()
	defer snap.Release()
	states, err := backfill.ReadStates(snap.Snap, len(job.Schema().PK))
	if err != nil {
		return false, err
	}
	finished := make(map[int]bool, len(states))
	for _, st := range states {
		finished[int(st.Vnode)] = st.Finished
	}
	for a := range cfg.Par {
		lo, hi := storage.OwnedVnodes(a, cfg.Par, cfg.Vnodes)
		done := 0
		for v := lo; v < hi; v++ {
			if finished[v] {
				done++
			}
		}
		if done > 0 && done < hi-lo {
			return true, nil
		}
	}
	return false, nil
}

// TestReemittedPerVnode: after a power loss mid-scan, each vnode's scan re-emits
// exactly the rows past its persisted position: for every vnode, the rows the
// recovered job read (its final row count minus the persisted one) equal A's rows of
// that vnode after the persisted position. A snapshot-only job, so A does not move.
func TestReemittedPerVnode(t *testing.T) {
	const rows = 4000
	for i, scan := range []backfill.Scan{backfill.Merged, backfill.PerVnode} {
		t.Run(scan.String(), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			fs := vfs.NewCrashableMem()
			cfg := SmallJob(rows, scan, true, uint64(90+i))
			cfg.ChangesPerSecond, cfg.FS = 0, fs
			runCtx, stop := context.WithCancelCause(ctx)
			defer stop(nil)
			var clone atomic.Pointer[vfs.MemFS]
			cfg.OnEvent = func(ev pipeline.Event) {
				if ev.Kind == pipeline.EventSnapshotChunk && ev.SnapshotRows >= rows/2 && clone.Load() == nil {
					if clone.CompareAndSwap(nil, fs.CrashClone(vfs.CrashCloneCfg{})) {
						stop(errCrash)
					}
				}
			}
			job, err := pipeline.Prepare(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := job.Run(runCtx); !errors.Is(err, errCrash) {
				t.Fatalf("run: err = %v, want the power loss", err)
			}
			job.Close()

			cfg.FS = clone.Load()
			job = recoverJob(ctx, t, cfg)
			kept := statesByVnode(t, job)
			past := rowsPastPositions(t, job, kept)
			res, err := job.Run(ctx)
			if err != nil {
				t.Fatal(fmt.Errorf("after the power loss: %w", err))
			}
			final := statesByVnode(t, job)
			var sum int64
			for v := range cfg.Vnodes {
				if got := final[v].RowCount - kept[v].RowCount; got != past[v] {
					t.Errorf("vnode %d: read %d rows after recovery, want the %d past its persisted position %v", v, got, past[v], kept[v].Pos)
				}
				sum += past[v]
			}
			if res.SnapshotRows != sum || res.Resumed == 0 {
				t.Errorf("the recovered job read %d snapshot rows (resumed from %d), want the %d past the persisted positions", res.SnapshotRows, res.Resumed, sum)
			}
		})
	}
}

// statesByVnode reads the job's committed state rows, by vnode.
func statesByVnode(t *testing.T, job *pipeline.Job) map[int]backfill.VnodeState {
	t.Helper()
	snap := job.Store().Latest()
	defer snap.Release()
	states, err := backfill.ReadStates(snap.Snap, len(job.Schema().PK))
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]backfill.VnodeState{}
	for _, st := range states {
		out[int(st.Vnode)] = st
	}
	return out
}

// rowsPastPositions counts, per vnode, A's rows after the vnode's position in states
// (all of them without a state row; none once finished).
func rowsPastPositions(t *testing.T, job *pipeline.Job, states map[int]backfill.VnodeState) map[int]int64 {
	t.Helper()
	snap := job.Store().Latest()
	defer snap.Release()
	lo, hi := storage.TableBounds(storage.TableUpstream)
	it, err := snap.Snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	s := job.Schema()
	out := map[int]int64{}
	for ok := it.First(); ok; ok = it.Next() {
		v := int(storage.KeyVnode(it.Key()))
		st, has := states[v]
		switch {
		case has && st.Finished:
		case !has || st.Pos == nil || bytes.Compare(it.Key()[storage.PrefixLen:], memcmp.AppendKey(nil, st.Pos, s.PKDesc)) > 0:
			out[v]++
		}
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return out
}
