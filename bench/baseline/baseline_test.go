package baseline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/backfill"
	"github.com/backfill-bench/backfill-bench/bench/meterfs"
	"github.com/backfill-bench/backfill-bench/bench/pipeline"
)

// recordJob runs a backfill of cfg that records its epoch batches, and returns the log.
func recordJob(t *testing.T, cfg pipeline.Config) (*EpochLog, *pipeline.Result) {
	t.Helper()
	log, err := NewEpochLog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	cfg.RecordEpochs = log
	res, _ := runJob(t, cfg)
	return log, res
}

// replayJob runs replay (Replay or PacedReplay) of log on a job of cfg.
func replayJob(cfg pipeline.Config, log *EpochLog, replay func(context.Context, *pipeline.Job, *EpochLog) (*pipeline.Result, error)) (*pipeline.Result, error) {
	j, err := pipeline.Prepare(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return replay(ctx, j, log)
}

// TestReplayCommitsTheBackfillsBatches: the replay commits exactly the backfill's
// epochs, with its syncs, and ends with B == A and the same MV rows; in every
// scan and persistence mode, and with a checkpoint only every third barrier.
func TestReplayCommitsTheBackfillsBatches(t *testing.T) {
	for _, tc := range []struct {
		name    string
		persist bool
		ckpt    int
	}{{"persist=off", false, 1}, {"persist=on", true, 1}, {"persist=on/ckpt=3", true, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := smallJob(3000, 2, 16, tc.persist, 41)
			cfg.CheckpointFrequency = tc.ckpt
			log, bf := recordJob(t, cfg)
			if log.Epochs() != len(bf.Epochs) {
				t.Fatalf("recorded %d epochs, the backfill committed %d", log.Epochs(), len(bf.Epochs))
			}
			cfg.RecordEpochs = nil
			res, err := replayJob(cfg, log, Replay)
			if err != nil {
				t.Fatal(err)
			}
			if res.Rows() != bf.Rows() {
				t.Errorf("replay reports %d rows processed, the backfill %d", res.Rows(), bf.Rows())
			}
			if res.AllocBytes < uint64(log.bytes) { // each batch read is allocated
				t.Errorf("replay reports %d B allocated, less than the %d B of batches it read", res.AllocBytes, log.bytes)
			}
			if res.MVRows != bf.MVRows || res.FinalEpoch != bf.FinalEpoch {
				t.Errorf("replay: %d rows at epoch %d, the backfill %d at %d", res.MVRows, res.FinalEpoch, bf.MVRows, bf.FinalEpoch)
			}
			// One WAL sync per checkpoint in both: the same syncs.
			if got, want := res.FS.Syncs[meterfs.WAL], bf.FS.Syncs[meterfs.WAL]; got != want {
				t.Errorf("replay synced the WAL %d times, the backfill %d", got, want)
			}
			if got, want := res.FS.Bytes[meterfs.WAL], bf.FS.Bytes[meterfs.WAL]; got != want {
				t.Errorf("replay wrote %d WAL bytes, the backfill %d", got, want)
			}
		})
	}
}

// TestReplayFlushesAsTheBackfill: on a checkpointed store with compaction groups
// the replay commits a snapshot backfill's creating epochs apart from the
// upstream's, as the backfill did, so each checkpoint flushes the same groups and
// the replay flushes exactly the backfill's bytes (a creating epoch replayed as an
// upstream one also flushes the upstream's group).
func TestReplayFlushesAsTheBackfill(t *testing.T) {
	cfg := smallJob(3000, 2, 16, true, 43)
	cfg.Scan, cfg.Checkpointed, cfg.CompactionGroups, cfg.BarrierRows = backfill.Snapshot, true, true, 500
	log, bf := recordJob(t, cfg)
	if len(bf.Creating) == 0 {
		t.Fatal("no creating epoch: the test needs the snapshot scan")
	}
	cfg.RecordEpochs = nil
	res, err := replayJob(cfg, log, Replay)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.FS.Bytes[meterfs.Flush], bf.FS.Bytes[meterfs.Flush]; got != want || want == 0 {
		t.Errorf("replay flushed %d B, the backfill %d", got, want)
	}
}

// TestReplayVerifies: a log missing one of the backfill's epochs leaves B unequal
// to A, and the replay says so instead of reporting.
func TestReplayVerifies(t *testing.T) {
	cfg := smallJob(3000, 2, 16, true, 42)
	log, _ := recordJob(t, cfg)
	if log.Epochs() < 3 {
		t.Fatalf("only %d epochs recorded", log.Epochs())
	}
	// Drop the second epoch: rewrite the log without it.
	short, err := NewEpochLog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer short.Close()
	r, err := log.reader()
	if err != nil {
		t.Fatal(err)
	}
	for i := range log.Epochs() {
		e, repr, err := readRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		if i != 1 {
			short.Add(e, repr)
		}
	}
	cfg.RecordEpochs = nil
	if _, err := replayJob(cfg, short, Replay); err == nil || !strings.Contains(err.Error(), "MV verification") {
		t.Fatalf("replay of a log missing an epoch: err %v, want an MV verification failure", err)
	}
	if _, err := replayJob(cfg, &EpochLog{}, Replay); err == nil {
		t.Fatal("replay of an empty log: no error")
	}
}

// TestPacedReplayKeepsTheRecordedPace: the log holds when the backfill committed
// each batch, in order and within its time; the paced replay commits none earlier
// (a log stretched to three times the pace takes it at least three times as
// long), and waits on its context; the replay ignores the pace.
func TestPacedReplayKeepsTheRecordedPace(t *testing.T) {
	cfg := smallJob(3000, 2, 16, true, 44)
	log, bf := recordJob(t, cfg)
	cfg.RecordEpochs = nil
	var last time.Duration
	stretched := rewriteLog(t, log, func(e *pipeline.RecordedEpoch) {
		if e.At <= 0 || e.At < last || e.At > bf.Wall {
			t.Errorf("epoch %d committed at %v, after %v, in a job of %v", e.Epoch, e.At, last, bf.Wall)
		}
		last = e.At
		e.At *= 3
	})
	res, err := replayJob(cfg, stretched, PacedReplay)
	if err != nil {
		t.Fatal(err)
	}
	if res.Wall < 3*last {
		t.Errorf("the paced replay took %v, less than the %v its log's last batch was committed at", res.Wall, 3*last)
	}

	late := rewriteLog(t, log, func(e *pipeline.RecordedEpoch) { e.At += time.Hour })
	if _, err := replayJob(cfg, late, Replay); err != nil {
		t.Errorf("the replay of a log an hour late: %v (it should not wait)", err)
	}
	j, err := pipeline.Prepare(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := PacedReplay(ctx, j, late); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the paced replay of a log an hour late, cancelled: err %v, want the context's", err)
	}
}

// rewriteLog returns a copy of log with edit applied to every record.
func rewriteLog(t *testing.T, log *EpochLog, edit func(*pipeline.RecordedEpoch)) *EpochLog {
	t.Helper()
	out, err := NewEpochLog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	r, err := log.reader()
	if err != nil {
		t.Fatal(err)
	}
	for range log.Epochs() {
		e, repr, err := readRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		edit(&e)
		if err := out.Add(e, repr); err != nil {
			t.Fatal(err)
		}
	}
	out.snapshotRows, out.upstreamRows = log.snapshotRows, log.upstreamRows
	return out
}

// TestEpochLogRemovesItsFile: the spill file goes with Close.
func TestEpochLogRemovesItsFile(t *testing.T) {
	log, err := NewEpochLog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	name := log.f.Name()
	if err := log.Add(pipeline.RecordedEpoch{Epoch: 1, Checkpoint: true, SnapshotRows: 1}, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(name); !os.IsNotExist(err) {
		t.Fatalf("%s after Close: %v", name, err)
	}
}

// TestScanOnlyReadsEveryRow: the scan-only baseline reads all of A with either
// scan and any actor count, and writes nothing.
func TestScanOnlyReadsEveryRow(t *testing.T) {
	for _, par := range []int{1, 3} {
		for _, scan := range []string{"merged", "per-vnode"} {
			t.Run(fmt.Sprintf("par=%d/scan=%s", par, scan), func(t *testing.T) {
				cfg := smallJob(2500, par, 16, false, 43)
				var err error
				if cfg.Scan, err = backfill.ParseScan(scan); err != nil {
					t.Fatal(err)
				}
				j, err := pipeline.Prepare(context.Background(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer j.Close()
				before := j.Store().FS.Stats()
				res, err := ScanOnly(context.Background(), j)
				if err != nil {
					t.Fatal(err)
				}
				if res.SnapshotRows != 2500 {
					t.Errorf("scan-only read %d rows, want 2500", res.SnapshotRows)
				}
				if w := j.Store().FS.Stats().Sub(before).TotalBytes(); w != 0 {
					t.Errorf("scan-only wrote %d bytes", w)
				}
			})
		}
	}
}

// TestBaselinesReportAllocations: the raw copy and the scan-only read report the
// heap allocations they made, as a job does, rather than none.
func TestBaselinesReportAllocations(t *testing.T) {
	for name, run := range map[string]func(context.Context, *pipeline.Job) (*pipeline.Result, error){"raw copy": RawCopy, "scan-only": ScanOnly} {
		j, err := pipeline.Prepare(context.Background(), smallJob(2500, 2, 16, false, 44))
		if err != nil {
			t.Fatal(err)
		}
		res, err := run(context.Background(), j)
		j.Close()
		if err != nil {
			t.Fatal(err)
		}
		if res.Allocs == 0 || res.AllocBytes == 0 {
			t.Errorf("%s reports %d allocations of %d B", name, res.Allocs, res.AllocBytes)
		}
	}
}

// smallJob is a small time-driven job (as bench/pipeline's tests make them).
func smallJob(rows int64, par, vnodes int, persist bool, seed uint64) pipeline.Config {
	cfg := pipeline.Default()
	cfg.Rows = rows
	cfg.Par = par
	cfg.Vnodes = vnodes
	cfg.Persist = persist
	cfg.Seed = seed
	cfg.BarrierInterval = raceSlowdown * (10*time.Millisecond + time.Duration(vnodes/par)*100*time.Microsecond)
	cfg.ChangesPerSecond = 5_000 / raceSlowdown
	cfg.ChunkSize = 64
	cfg.SnapshotRateLimit = 30_000 / float64(par) / raceSlowdown
	cfg.ChangeEpochs = 30
	cfg.SettleWait = 100 * time.Millisecond
	return cfg
}

func runJob(t *testing.T, cfg pipeline.Config) (*pipeline.Result, *pipeline.Job) {
	t.Helper()
	j, err := pipeline.Prepare(context.Background(), cfg)
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
