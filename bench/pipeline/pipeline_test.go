package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/backfill-bench/backfill-bench/bench/backfill"
	"github.com/backfill-bench/backfill-bench/bench/meterfs"
	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/source"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/verify"
	"github.com/backfill-bench/backfill-bench/workloads"
)

// smallJob is a job that spans many short epochs while the scan runs, with a busy
// change stream, so the filter and the rescans are exercised. The stream stops after
// 30 epochs: the scan must end even on a machine slow enough (or a -race build) that
// it would otherwise chase the inserts forever.
func smallJob(rows int64, par, vnodes int, persist bool, seed uint64) Config {
	cfg := Default()
	cfg.Rows = rows
	cfg.Par = par
	cfg.Vnodes = vnodes
	cfg.Persist = persist
	cfg.Seed = seed
	// Reopening the merged scan costs an iterator per owned vnode at every barrier;
	// the interval leaves room for that, or each epoch would read just one row.
	cfg.BarrierInterval = raceSlowdown * (10*time.Millisecond + time.Duration(vnodes/par)*100*time.Microsecond)
	cfg.ChangesPerSecond = 5_000 / raceSlowdown
	cfg.ChunkSize = 64
	cfg.SnapshotRateLimit = 30_000 / float64(par) / raceSlowdown // ~100 ms of scan for 3000 rows
	cfg.ChangeEpochs = 30
	cfg.SettleWait = 100 * time.Millisecond
	return cfg
}

func runJob(t *testing.T, cfg Config) (*Result, *Job) {
	t.Helper()
	j, err := Prepare(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := j.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return res, j
}

// midScanEpochs counts epochs that carried both snapshot rows and upstream rows.
func midScanEpochs(res *Result) int {
	n := 0
	for _, e := range res.Epochs {
		if e.SnapshotRows > 0 && e.UpstreamRows > 0 {
			n++
		}
	}
	return n
}

func TestBackfillEqualsUpstream(t *testing.T) {
	seed := uint64(0)
	for _, par := range []int{1, 2, 4} {
		for _, vnodes := range []int{1, 256} {
			for k, persist := range []bool{false, true, false, true} {
				if vnodes < par {
					continue
				}
				seed++
				scan := backfill.Scan(k / 2)
				// Checkpoint reads with a checkpoint every third barrier: the scan
				// merges several epochs' buffered changes.
				read := backfill.Read(seed % 2)
				name := fmt.Sprintf("par=%d/vnodes=%d/persist=%v/scan=%v/read=%v", par, vnodes, persist, scan, read)
				cfg := smallJob(3000, par, vnodes, persist, seed)
				cfg.Scan, cfg.Read = scan, read
				if read == backfill.Checkpoint {
					cfg.CheckpointFrequency = 3
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					res, _ := runJob(t, cfg) // Run verifies B == A
					if n := midScanEpochs(res); n < 3 {
						t.Errorf("only %d epochs mixed snapshot and upstream rows; the test no longer exercises the merge", n)
					}
					if res.SnapshotRows < cfg.Rows {
						t.Errorf("read %d snapshot rows, want ≥ %d", res.SnapshotRows, cfg.Rows)
					}
				})
			}
		}
	}
}

// TestEveryWorkload runs a backfill over every named workload: B == A each time.
func TestEveryWorkload(t *testing.T) {
	for i, name := range workloads.Names() {
		t.Run(name, func(t *testing.T) {
			cfg := smallJob(2000, 2, 64, i%2 == 0, uint64(200+i))
			cfg.Scan = backfill.Scan(i / 2 % 2)
			cfg.Read = backfill.Read(i / 4 % 2)
			cfg.Workload = name
			cfg.SnapshotRateLimit /= 2                   // ~130 ms of scan: about ten epochs
			cfg.ChangesPerSecond = 20_000 / raceSlowdown // enough for several tombstone bursts
			res, _ := runJob(t, cfg)
			if n := midScanEpochs(res); n < 3 {
				for _, e := range res.Epochs[:min(len(res.Epochs), 12)] {
					t.Logf("epoch %d: latency %v, %d snapshot rows, %d upstream rows", e.Epoch, e.Latency, e.SnapshotRows, e.UpstreamRows)
				}
				t.Errorf("only %d epochs mixed snapshot and upstream rows", n)
			}
		})
	}
}

// TestReadsDoNotWaitForCommits: with commits slowed by 20 ms syncs and 5 ms barriers,
// uncommitted reads open their scans on epochs not yet committed (the sealed epochs
// overlaid), and checkpoint reads on the last checkpoint with the changes buffered
// since; neither waits, and the MV equals A.
func TestReadsDoNotWaitForCommits(t *testing.T) {
	for _, read := range []backfill.Read{backfill.Uncommitted, backfill.Checkpoint} {
		t.Run(read.String(), func(t *testing.T) {
			t.Parallel()
			cfg := smallJob(3000, 2, 16, true, 77)
			cfg.Read = read
			cfg.BarrierInterval = raceSlowdown * 5 * time.Millisecond
			cfg.CheckpointFrequency = 4
			cfg.Throttle = meterfs.NewThrottle(meterfs.ThrottleConfig{Sync: meterfs.Latency{Median: 20 * time.Millisecond}})
			res, _ := runJob(t, cfg)
			var lag uint64
			var buffered int64
			for _, e := range res.Regular() {
				lag, buffered = max(lag, e.ReadLag), max(buffered, e.Buffered)
			}
			t.Logf("%d regular epochs; largest read lag %d epochs, most buffered writes %d", len(res.Regular()), lag, buffered)
			switch read {
			case backfill.Uncommitted:
				if lag == 0 || buffered != 0 {
					t.Errorf("largest read lag %d epochs, buffered writes %d; want a lag ≥ 1 (the scan read sealed epochs) and nothing buffered", lag, buffered)
				}
			case backfill.Checkpoint:
				if lag < 2 || buffered == 0 {
					t.Errorf("largest read lag %d epochs, buffered writes %d; want a lag ≥ 2 (checkpoints every 4 barriers) and buffered changes", lag, buffered)
				}
			}
		})
	}
}

func TestEdgeCases(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Config)
	}{
		{"empty upstream table", func(c *Config) { c.Rows = 0 }},
		{"empty table snapshot only", func(c *Config) { c.Rows = 0; c.ChangesPerSecond = 0 }},
		{"upstream only deletes", func(c *Config) { c.Mix = source.Mix{Delete: 1}; c.ChangesPerSecond = 50_000 }},
		{"single row", func(c *Config) { c.Rows = 1 }},
		{"snapshot only", func(c *Config) { c.ChangesPerSecond = 0 }},
		{"updates only", func(c *Config) { c.Mix = source.Mix{Update: 1} }},
		{"checkpoint every 3rd barrier", func(c *Config) { c.CheckpointFrequency = 3 }},
		{"one-row chunks", func(c *Config) { c.ChunkSize = 1; c.Rows = 500 }},
		{"front-loaded changes", func(c *Config) { c.FrontLoaded = true }},
		{"more actors than rows", func(c *Config) { c.Rows = 2; c.Par = 4 }},
		{"no rate limit", func(c *Config) { c.SnapshotRateLimit = 0; c.Rows = 20000 }},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for k, persist := range []bool{false, true, false, true} {
				cfg := smallJob(1000, 2, 256, persist, uint64(100+i))
				cfg.Scan = backfill.Scan(k / 2)
				tt.edit(&cfg)
				res, j := runJob(t, cfg)
				if cfg.ChangesPerSecond == 0 && res.UpstreamRows != 0 {
					t.Errorf("snapshot-only job saw %d upstream rows", res.UpstreamRows)
				}
				if persist {
					checkStateRows(t, j, res)
				}
			}
		})
	}
}

// checkStateRows checks the state table after a persist=on job: one row per vnode,
// all finished, row counts summing to the snapshot rows read.
func checkStateRows(t *testing.T, j *Job, res *Result) {
	t.Helper()
	snap := j.Store().Latest()
	defer snap.Release()
	if err := verify.State(snap.Snap, j.Schema(), j.Config().Vnodes, res.SnapshotRows); err != nil {
		t.Fatal(err)
	}
}

func TestStateRowsAfterPersistedJob(t *testing.T) {
	res, j := runJob(t, smallJob(4000, 2, 256, true, 7))
	checkStateRows(t, j, res)
	if res.Logical.State == 0 {
		t.Error("persist=on wrote no state bytes")
	}
}

func TestNoStateRowsWithoutPersist(t *testing.T) {
	res, j := runJob(t, smallJob(2000, 2, 16, false, 8))
	snap := j.Store().Latest()
	defer snap.Release()
	states, err := backfill.ReadStates(snap.Snap, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 0 || res.Logical.State != 0 {
		t.Errorf("persist=off left %d state rows, %d state bytes", len(states), res.Logical.State)
	}
}

func TestVerifyMVNamesFirstDifference(t *testing.T) {
	_, j := runJob(t, smallJob(500, 1, 4, false, 9))
	db := j.Store().DB
	s := j.Schema()
	tests := []struct {
		name, want string
		edit       func(b *pebble.Batch, r row.Row, vn uint16)
	}{
		{"missing", "missing from B", func(b *pebble.Batch, r row.Row, vn uint16) {
			b.Delete(storage.AppendRowKey(nil, storage.TableMV, vn, s, r), nil)
		}},
		{"extra", "in B but not in A", func(b *pebble.Batch, r row.Row, vn uint16) {
			b.Delete(storage.AppendRowKey(nil, storage.TableUpstream, vn, s, r), nil)
		}},
		{"differs", "differs", func(b *pebble.Batch, r row.Row, vn uint16) {
			r2 := append(row.Row(nil), r...)
			r2[2] = row.Str("tampered")
			b.Set(storage.AppendRowKey(nil, storage.TableMV, vn, s, r), row.AppendValue(nil, r2), nil)
		}},
	}
	// Tamper with the first row of A (by key order), whatever the stream left there.
	lo, hi := storage.TableBounds(storage.TableUpstream)
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		t.Fatal(err)
	}
	if !it.First() {
		t.Fatal("A is empty")
	}
	vn := storage.KeyVnode(it.Key())
	r, err := row.DecodeValue(nil, it.Value())
	it.Close()
	if err != nil {
		t.Fatal(err)
	}
	wantKey := fmt.Sprintf("vnode %d pk (%d)", vn, r[0].I)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := db.NewIndexedBatch()
			defer b.Close()
			tt.edit(b, r, vn)
			// Read through the uncommitted batch on top of the DB.
			if _, err := verify.MV(b, s); err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), wantKey) {
				t.Errorf("error = %v, want one containing %q and %q", err, tt.want, wantKey)
			}
			if _, err := verify.MV(db, s); err != nil {
				t.Errorf("untouched DB: %v", err)
			}
		})
	}
}

// TestVerifyProgress: the check after a crash accepts a finished job's state and
// rejects MV rows beyond a vnode's persisted position and missing ones below it.
func TestVerifyProgress(t *testing.T) {
	_, j := runJob(t, smallJob(2000, 2, 16, true, 11))
	if err := j.VerifyProgress(); err != nil {
		t.Fatalf("finished job: %v", err)
	}
	db := j.Store().DB
	s := j.Schema()
	snap := j.Store().Latest()
	states, err := backfill.ReadStates(snap.Snap, len(s.PK))
	snap.Release()
	if err != nil {
		t.Fatal(err)
	}
	// Move vnode 3 back to "not finished, at its first row": B holds more than that.
	lo, hi := storage.VnodeBounds(storage.TableUpstream, 3)
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		t.Fatal(err)
	}
	if !it.First() {
		t.Fatal("vnode 3 is empty")
	}
	first, err := row.DecodeValue(nil, it.Value())
	it.Close()
	if err != nil {
		t.Fatal(err)
	}
	st := states[3]
	st.Finished, st.Pos = false, s.PKOf(nil, first)
	b := db.NewBatch()
	b.Set(backfill.AppendStateKey(nil, 3), backfill.AppendStateValue(nil, st, len(s.PK)), nil)
	if err := j.Store().CommitEpoch(b, j.Config().Seed+1000, true); err != nil {
		t.Fatal(err)
	}
	if err := j.VerifyProgress(); err == nil || !strings.Contains(err.Error(), "in B but not in A up to the persisted position") {
		t.Errorf("err = %v, want B's rows beyond vnode 3's position reported", err)
	}
}

// TestWorkDrivenCadenceIsDeterministic runs a work-driven job twice: barriers cut
// by rows read give the same epochs, the same rows in each, and the same bytes.
func TestWorkDrivenCadenceIsDeterministic(t *testing.T) {
	for _, scan := range []backfill.Scan{backfill.Merged, backfill.PerVnode} {
		t.Run(scan.String(), func(t *testing.T) {
			cfg := Default()
			cfg.Rows, cfg.Par, cfg.Vnodes, cfg.Persist, cfg.Scan = 20_000, 2, 16, true, scan
			cfg.BarrierRows, cfg.ChangesPerEpoch, cfg.ChunkSize = 1000, 40, 256
			cfg.SettleWait = 100 * time.Millisecond
			var runs []*Result
			for range 2 {
				res, _ := runJob(t, cfg)
				runs = append(runs, res)
			}
			a, b := runs[0], runs[1]
			if len(a.Epochs) != len(b.Epochs) {
				t.Fatalf("%d epochs, then %d", len(a.Epochs), len(b.Epochs))
			}
			// 20 000 rows at 1 000 a barrier: 20 full epochs, then the one that ends the scans.
			if n := len(a.Epochs); n < 20 || n > 22 {
				t.Errorf("%d epochs, want about 20", n)
			}
			for i := range a.Epochs {
				ea, eb := a.Epochs[i], b.Epochs[i]
				if ea.SnapshotRows != eb.SnapshotRows || ea.UpstreamRows != eb.UpstreamRows || ea.Changes != eb.Changes || ea.StateRows != eb.StateRows {
					t.Errorf("epoch %d: %+v, then %+v", i, ea, eb)
				}
				if i < 19 && ea.SnapshotRows != 1000 {
					t.Errorf("epoch %d read %d snapshot rows, want 1000", i, ea.SnapshotRows)
				}
			}
			if a.Logical != b.Logical {
				t.Errorf("logical bytes %+v, then %+v", a.Logical, b.Logical)
			}
			if a.Persist() != b.Persist() {
				t.Errorf("persist bytes %+v, then %+v", a.Persist(), b.Persist())
			}
			if wa, wb := a.FS.Bytes[0], b.FS.Bytes[0]; wa != wb {
				t.Errorf("WAL bytes %d, then %d", wa, wb)
			}
		})
	}
}

// TestTimeDrivenCadenceStillWorks: the wall-clock cadence is what a real system
// does, and stays.
func TestTimeDrivenCadenceStillWorks(t *testing.T) {
	cfg := smallJob(3000, 2, 16, true, 3)
	res, _ := runJob(t, cfg)
	if len(res.Epochs) < 3 || res.MVRows == 0 {
		t.Errorf("%d epochs, %d MV rows", len(res.Epochs), res.MVRows)
	}
}

// TestVerifyStateCatchesWrongState: a missing, unfinished or miscounted state row
// fails the check every persist=on run makes.
func TestVerifyStateCatchesWrongState(t *testing.T) {
	res, j := runJob(t, smallJob(2000, 2, 16, true, 9))
	s := j.Schema()
	snap := j.Store().Latest()
	defer snap.Release()
	if err := verify.State(snap.Snap, s, 16, res.SnapshotRows+1); err == nil || !strings.Contains(err.Error(), "count") {
		t.Errorf("a miscount: err = %v", err)
	}
	if err := verify.State(snap.Snap, s, 17, res.SnapshotRows); err == nil || !strings.Contains(err.Error(), "one per vnode") {
		t.Errorf("a missing row: err = %v", err)
	}
	// Rewrite vnode 3's row as unfinished.
	states, err := backfill.ReadStates(snap.Snap, len(s.PK))
	if err != nil {
		t.Fatal(err)
	}
	st := states[3]
	st.Finished = false
	b := j.Store().DB.NewBatch()
	b.Set(backfill.AppendStateKey(nil, st.Vnode), backfill.AppendStateValue(nil, st, len(s.PK)), nil)
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := verify.State(j.Store().NewSnapshot(), s, 16, res.SnapshotRows); err == nil || !strings.Contains(err.Error(), "vnode 3 is not finished") {
		t.Errorf("an unfinished vnode: err = %v", err)
	}
}

// TestPrimaryKeyChangingUpdates: updates that move rows to new keys, split into a
// delete and an insert when the keys belong to different actors, still leave B
// equal to A, for both scans and persistence modes; the job saw both split and
// whole pairs.
func TestPrimaryKeyChangingUpdates(t *testing.T) {
	for _, scan := range []backfill.Scan{backfill.Merged, backfill.PerVnode} {
		for _, persist := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/persist=%v", scan, persist), func(t *testing.T) {
				cfg := smallJob(3000, 2, 16, persist, 11)
				cfg.Scan = scan
				cfg.Mix = source.Mix{PKUpdate: 0.7, Insert: 0.2, Delete: 0.1}
				res, _ := runJob(t, cfg)
				if res.UpstreamRows == 0 || midScanEpochs(res) == 0 {
					t.Errorf("upstream rows %d, epochs with both %d: the moves never met the scan", res.UpstreamRows, midScanEpochs(res))
				}
				if res.SplitUpdates == 0 || res.WholeUpdates == 0 {
					t.Errorf("%d key-changing updates split across actors, %d kept whole: want both", res.SplitUpdates, res.WholeUpdates)
				}
			})
		}
	}
}

// TestCheckpointUploadsInBackground: on an object store the next epochs commit while
// a checkpoint uploads (some commit finds the checkpoint before it not yet
// durable), the job still verifies, and a checkpoint is done only once durable,
// as a watcher of the store sees it.
func TestCheckpointUploadsInBackground(t *testing.T) {
	for _, read := range []backfill.Read{backfill.Uncommitted, backfill.Checkpoint} {
		t.Run(read.String(), func(t *testing.T) {
			t.Parallel()
			cfg := smallJob(3000, 2, 16, true, 78)
			cfg.Read = read
			cfg.Throttle = meterfs.NewThrottle(meterfs.ThrottleConfig{Upload: &meterfs.Upload{Latency: meterfs.Latency{Median: raceSlowdown * 30 * time.Millisecond}}})
			var j *Job
			var overlapped atomic.Int64
			cfg.OnEvent = func(ev Event) {
				if ev.Kind != EventCommitted || !ev.Checkpoint || j == nil {
					return
				}
				c := j.Store().LatestCheckpoint()
				if c.Epoch+1 < ev.Epoch {
					overlapped.Add(1)
				}
				c.Release()
			}
			j, err := Prepare(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			// Watch, apart from the job's own bookkeeping, when epochs become durable:
			// the store's latest checkpoint reaches an epoch once its upload ended.
			// Each poll records when it started and what it saw.
			type poll struct {
				at     time.Time
				latest uint64
			}
			var polls []poll
			stop, watched := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(watched)
				for {
					at := time.Now()
					c := j.Store().LatestCheckpoint()
					polls = append(polls, poll{at, c.Epoch})
					c.Release()
					select {
					case <-stop:
						return
					case <-time.After(200 * time.Microsecond):
					}
				}
			}()
			res, err := j.Run(context.Background())
			close(stop)
			<-watched
			if err != nil {
				t.Fatal(err)
			}
			uploads := 0
			for i, e := range res.Epochs {
				if e.Upload > 0 {
					uploads++
				}
				if e.Upload > 0 && !e.Checkpoint {
					t.Errorf("epoch %d uploaded without being a checkpoint", e.Epoch)
				}
				if i > 0 && e.Committed().Before(res.Epochs[i-1].Committed()) {
					t.Errorf("epoch %d done at %v, before epoch %d (%v)", e.Epoch, e.Committed(), res.Epochs[i-1].Epoch, res.Epochs[i-1].Committed())
				}
				if !e.Checkpoint {
					continue
				}
				// A checkpoint is done once durable, not when its commit returned, an
				// upload earlier: not before a poll that found it not yet durable began.
				for _, p := range polls {
					if p.latest < e.Epoch && e.Committed().Before(p.at) {
						t.Errorf("checkpoint %d done at +%v, yet not durable at +%v", e.Epoch, e.Committed().Sub(e.Injected), p.at.Sub(e.Injected))
						break
					}
				}
			}
			t.Logf("%d epochs, %d uploads, %d commits while the checkpoint before was uploading", len(res.Epochs), uploads, overlapped.Load())
			if uploads == 0 || overlapped.Load() == 0 {
				t.Errorf("%d uploads, %d commits during an upload; want uploads going on while later epochs commit", uploads, overlapped.Load())
			}
		})
	}
}

// TestRecoveryEndsAtFirstRow: recovery-sec ends when the recovered scan emits its
// first row, not at the first commit. The first commit after the reopen is held
// until a row was emitted; the end the job records is no later than that row and
// before that commit, and recovery-sec after the reopen is no longer than the time
// from Run to that row.
func TestRecoveryEndsAtFirstRow(t *testing.T) {
	const rows = 3000
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := smallJob(rows, 2, 16, true, 81)
	cfg.FS = vfs.NewMem()
	errStop := errors.New("stopped")
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	cfg.OnEvent = func(ev Event) {
		if ev.Kind == EventCommitted && ev.SnapshotRows >= rows/3 {
			stop(errStop)
		}
	}
	j, err := Prepare(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Run(runCtx); !errors.Is(err, errStop) {
		j.Close()
		t.Fatalf("run: err = %v, want the stop: the job ended first", err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}

	// Set by the hooks; read once Run has returned (its goroutines have ended).
	var firstRow, commitFrom time.Time
	emitted := make(chan struct{})
	var once sync.Once
	commits := 0 // the collector's goroutine only
	cfg.OnEvent = func(ev Event) {
		switch ev.Kind {
		case EventSnapshotChunk:
			once.Do(func() { firstRow = time.Now(); close(emitted) })
		case EventBeforeCommit:
			if commits++; commits == 1 {
				select {
				case <-emitted:
				case <-ctx.Done():
				}
				commitFrom = time.Now()
			}
		}
	}
	j, err = Recover(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if got := j.Resumed(); got == 0 || got >= rows {
		t.Fatalf("resumed from %d persisted rows, want a stop mid-scan (of %d)", got, rows)
	}
	before := time.Now()
	res, err := j.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case firstRow.IsZero():
		t.Fatal("the recovered scan emitted no row")
	case res.RecoveredAt.After(firstRow):
		t.Errorf("recovery ended %v after the first row was emitted", res.RecoveredAt.Sub(firstRow))
	case !res.RecoveredAt.Before(commitFrom):
		t.Errorf("recovery ended %v after the first commit began, not at the first row", res.RecoveredAt.Sub(commitFrom))
	case res.Recovery-res.Reopen > firstRow.Sub(before):
		t.Errorf("recovery-sec %v after the reopen, longer than the %v from Run to the first row", res.Recovery-res.Reopen, firstRow.Sub(before))
	}
}
