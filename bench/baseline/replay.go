package baseline

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/pipeline"
	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/scaniter"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/verify"
)

// EpochLog holds the epoch batches a backfill job committed (each batch's contents
// and whether it synced), spilled to a temporary file: at 10⁷ rows they are
// gigabytes. Set Config.RecordEpochs to one to record a job's batches; Replay
// commits them again without the executor.
type EpochLog struct {
	f      *os.File
	w      *bufio.Writer
	epochs int
	bytes  int64
	// The rows the recorded job processed, which a replay reports as its own: the
	// same work.
	snapshotRows, upstreamRows int64
}

// epochLogHeader is a record's header: epoch (8 bytes), flags (1), data epoch (8),
// when it was committed (8, ns from the job's start), length (4).
const epochLogHeader = 29

// A record's flags.
const (
	recordCheckpoint = 1 << iota
	recordCreating
)

// NewEpochLog creates an empty log in dir ("" for the system's temporary directory).
func NewEpochLog(dir string) (*EpochLog, error) {
	f, err := os.CreateTemp(dir, "epochs-*.log")
	if err != nil {
		return nil, fmt.Errorf("baseline: epoch log: %w (set TMPDIR to a directory with room for the job's batches)", err)
	}
	return &EpochLog{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// Add appends one committed epoch batch; repr is copied out before it returns.
func (l *EpochLog) Add(e pipeline.RecordedEpoch, repr []byte) error {
	var h [epochLogHeader]byte
	binary.BigEndian.PutUint64(h[:8], e.Epoch)
	if e.Checkpoint {
		h[8] |= recordCheckpoint
	}
	if e.Creating {
		h[8] |= recordCreating
	}
	binary.BigEndian.PutUint64(h[9:17], e.DataEpoch)
	binary.BigEndian.PutUint64(h[17:25], uint64(e.At))
	binary.BigEndian.PutUint32(h[25:], uint32(len(repr)))
	if _, err := l.w.Write(h[:]); err != nil {
		return fmt.Errorf("baseline: epoch log %s: %w", l.f.Name(), err)
	}
	if _, err := l.w.Write(repr); err != nil {
		return fmt.Errorf("baseline: epoch log %s: %w", l.f.Name(), err)
	}
	l.epochs++
	l.bytes += int64(len(repr))
	l.snapshotRows += e.SnapshotRows
	l.upstreamRows += e.UpstreamRows
	return nil
}

// Epochs is the number of batches recorded.
func (l *EpochLog) Epochs() int { return l.epochs }

// Close removes the log's file.
func (l *EpochLog) Close() error {
	l.f.Close()
	return os.Remove(l.f.Name())
}

// reader rewinds the log and reads it from the start.
func (l *EpochLog) reader() (*bufio.Reader, error) {
	if err := l.w.Flush(); err != nil {
		return nil, fmt.Errorf("baseline: epoch log %s: %w", l.f.Name(), err)
	}
	if _, err := l.f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("baseline: epoch log %s: %w", l.f.Name(), err)
	}
	return bufio.NewReaderSize(l.f, 1<<20), nil
}

// readRecord reads the next record Add wrote (its rows are the log's, not the
// record's) and the batch's contents, in a fresh slice: a batch owns its contents
// until it is closed.
func readRecord(r io.Reader) (pipeline.RecordedEpoch, []byte, error) {
	var h [epochLogHeader]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return pipeline.RecordedEpoch{}, nil, fmt.Errorf("baseline: epoch log: %w", err)
	}
	e := pipeline.RecordedEpoch{Epoch: binary.BigEndian.Uint64(h[:8]), DataEpoch: binary.BigEndian.Uint64(h[9:17]),
		Checkpoint: h[8]&recordCheckpoint != 0, Creating: h[8]&recordCreating != 0, At: time.Duration(binary.BigEndian.Uint64(h[17:25]))}
	repr := make([]byte, binary.BigEndian.Uint32(h[25:]))
	if _, err := io.ReadFull(r, repr); err != nil {
		return e, nil, fmt.Errorf("baseline: epoch log: %w", err)
	}
	return e, repr, nil
}

// Replay is the executor-free baseline of a backfill: it commits, one by one as
// fast as the storage takes them, the epoch batches a backfill of the same
// configuration recorded in log (A's changes, B's rows, the state rows), each
// synced as it was and a creating epoch apart from the upstream's, as the backfill
// committed them, on a DB with A loaded as Prepare loads it. The batches' order,
// keys, values and syncs are the backfill's; what is left out is the executor (the
// scan, the merge, the filter, building the batches) and the stream. Backfill ÷
// replay is then the executor's own overhead and the storage work its slower pace
// adds (PacedReplay). It verifies B == A like Run. A prepared job runs Run,
// RawCopy, Replay, PacedReplay or ScanOnly, once.
func Replay(ctx context.Context, j *pipeline.Job, log *EpochLog) (*pipeline.Result, error) {
	return replay(ctx, j, log, false)
}

// PacedReplay is Replay at the recorded backfill's pace: it commits no batch
// before the time from its start that the backfill committed it at. Compactions
// run when they get the CPU, so what they rewrite for the same flushes depends on
// the job's pace: a job that leaves them CPU sooner has them run on fewer L0 files
// each, and they rewrite the base level more often. The replay leaves them less
// than the backfill did; the paced replay, which sleeps where the backfill
// computes, more. The storage's work at the backfill's pace is about between the
// two, and so is the share of the backfill's CPU that is not its executor's.
func PacedReplay(ctx context.Context, j *pipeline.Job, log *EpochLog) (*pipeline.Result, error) {
	return replay(ctx, j, log, true)
}

func replay(ctx context.Context, j *pipeline.Job, log *EpochLog, paced bool) (*pipeline.Result, error) {
	res, err := j.Claim()
	if err != nil {
		return nil, err
	}
	if log.epochs == 0 {
		return nil, errors.New("baseline: replay: the epoch log is empty: record a backfill into it first (Config.RecordEpochs)")
	}
	r, err := log.reader()
	if err != nil {
		return nil, err
	}
	fsStart := j.Store().FS.Stats()
	compactStart, err := j.Store().CompactionCPU()
	if err != nil {
		return nil, fmt.Errorf("baseline: replay: %w", err)
	}
	used := startUsage(j)
	start := time.Now()
	var last *storage.Upload // uploads end in commit order: the last ends after all
	var epoch uint64
	for range log.epochs {
		e, repr, err := readRecord(r)
		if err != nil {
			return nil, fmt.Errorf("baseline: replay: %w", err)
		}
		if paced {
			if err := sleepUntil(ctx, start.Add(e.At)); err != nil {
				return nil, err
			}
		}
		b := j.Store().DB.NewBatch()
		if err := b.SetRepr(repr); err != nil {
			b.Close()
			return nil, fmt.Errorf("baseline: replay: epoch %d: %w", e.Epoch, err)
		}
		var u *storage.Upload
		if e.Creating { // apart from the upstream's epochs, as the backfill committed it
			u, err = j.Store().CommitCreatingAsync(b, e.Epoch, e.DataEpoch, e.Checkpoint)
		} else {
			epoch = e.Epoch
			u, err = j.Store().CommitEpochAsync(b, e.Epoch, e.Checkpoint)
		}
		if err != nil {
			return nil, fmt.Errorf("baseline: replay: %w", err)
		}
		if u != nil {
			last = u
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	select {
	case <-last.Done(): // at once without uploads
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	res.Wall = time.Since(start)
	used.end(j, res)
	compactEnd, err := j.Store().CompactionCPU()
	if err != nil {
		return nil, fmt.Errorf("baseline: replay: %w", err)
	}
	res.CompactCPU = compactEnd - compactStart // offloaded compactions', as the backfill reports them
	fsJob := j.Store().FS.Stats()
	res.FS = fsJob.Sub(fsStart)
	res.FinalEpoch = epoch

	snap := j.Store().Latest()
	defer snap.Release()
	rows, err := verify.MV(snap.Snap, j.Schema())
	if err != nil {
		return nil, fmt.Errorf("baseline: replay: epoch %d: %w", snap.Epoch, err)
	}
	res.MVRows = rows
	res.SnapshotRows, res.UpstreamRows = log.snapshotRows, log.upstreamRows
	res.Logical.MV = log.bytes // the batches' bytes: all of them are the job's writes
	if err := j.Settle(); err != nil {
		return nil, err
	}
	res.Settle = j.Store().FS.Stats().Sub(fsJob)
	return res, nil
}

// ScanOnly is the read-side baseline: each actor reads its share of A's snapshot
// as the backfill's scan does (the same iterators: merged in pk order over its
// vnodes, or vnode by vnode, and each row decoded), and writes nothing. Backfill ÷
// scan-only says how much of a backfill's time its reads are. It checks that the
// actors together read every row of A.
func ScanOnly(ctx context.Context, j *pipeline.Job) (*pipeline.Result, error) {
	res, err := j.Claim()
	if err != nil {
		return nil, err
	}
	used := startUsage(j)
	start := time.Now()
	snap := j.Store().Latest()
	defer snap.Release()
	counts := make([]int64, j.Config().Par)
	errs := make([]error, j.Config().Par)
	var wg sync.WaitGroup
	for a := range j.Config().Par {
		lo, hi := storage.OwnedVnodes(a, j.Config().Par, j.Config().Vnodes)
		vnodes := make([]uint16, 0, hi-lo)
		for v := lo; v < hi; v++ {
			vnodes = append(vnodes, uint16(v))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[a], errs[a] = scanActor(ctx, j, snap, vnodes)
		}()
	}
	wg.Wait()
	res.Wall = time.Since(start)
	used.end(j, res)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("baseline: scan-only: %w", err)
	}
	for _, n := range counts {
		res.SnapshotRows += n
	}
	rows, err := verify.Count(snap.Snap, storage.TableUpstream)
	if err != nil {
		return nil, fmt.Errorf("baseline: scan-only: %w", err)
	}
	if rows != res.SnapshotRows {
		return nil, fmt.Errorf("baseline: scan-only: the actors read %d rows but A has %d", res.SnapshotRows, rows)
	}
	res.FinalEpoch = snap.Epoch
	return res, nil
}

// scanActor reads one actor's vnodes of A at snap, decoding every row, and
// returns how many rows it read.
func scanActor(ctx context.Context, j *pipeline.Job, snap *storage.EpochSnapshot, vnodes []uint16) (int64, error) {
	var it scaniter.Scan
	var err error
	if j.Config().Scan.Kind().OnePositionPerActor { // merged in pk order
		it, err = scaniter.NewMergeIter(snap.Snap, nil, storage.TableUpstream, vnodes, nil)
	} else {
		it, err = scaniter.NewVnodeIter(snap.Snap, nil, storage.TableUpstream, vnodes, make([][]byte, len(vnodes)), make([]bool, len(vnodes)))
	}
	if err != nil {
		return 0, err
	}
	defer it.Close()
	slab := make([]row.Datum, 0, 64)
	var n int64
	for {
		key, val, ok := it.Next()
		if !ok {
			return n, it.Err()
		}
		if slab, err = row.DecodeValue(slab[:0], val); err != nil {
			return n, fmt.Errorf("key %x: %w", key, err)
		}
		n++
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return n, err
			}
		}
	}
}

// sleepUntil returns at t, or with ctx's error when it ends first.
func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
