package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/verify"
)

// RawCopy is the physical limit a backfill is measured against: one iterator scans A
// and its rows are batch-written to a scratch table, chunk by chunk, with no stream,
// no merge and no filter; one synced commit per barrier-sized batch. It verifies the
// copy and measures it like Run. A prepared job runs either Run or RawCopy, once.
func (j *Job) RawCopy(ctx context.Context) (*Result, error) {
	if j.ran {
		return nil, errors.New("pipeline: a job runs once; Prepare another")
	}
	j.ran = true
	res := &Result{Load: j.load}
	fsStart := j.store.FS.Stats()
	cpuStart := jobCPU(j.store)
	start := time.Now()

	snap := j.store.Latest()
	defer snap.Release()
	lo, hi := storage.TableBounds(storage.TableUpstream)
	it, err := snap.Snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	// A synced commit every 64 chunks, like a checkpoint; the batches stay well under
	// half the memtable. On an object store the uploads go on in the background, as
	// the backfill's do.
	perCommit := int64(64 * j.cfg.ChunkSize)
	epoch := snap.Epoch
	b := j.store.DB.NewBatch()
	key := make([]byte, 0, 64)
	var last *storage.Upload // uploads end in commit order: the last ends after all
	flush := func() error {
		epoch++
		u, err := j.store.CommitEpochAsync(b, epoch, true)
		if u != nil {
			last = u
		}
		b = j.store.DB.NewBatch()
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		key = append(storage.AppendPrefix(key[:0], storage.TableScratch, storage.KeyVnode(it.Key())), it.Key()[storage.PrefixLen:]...)
		v, err := it.ValueAndErr()
		if err != nil {
			b.Close()
			return nil, err
		}
		if err := b.Set(key, v, nil); err != nil {
			b.Close()
			return nil, err
		}
		res.Logical.MV += int64(len(key) + len(v))
		res.SnapshotRows++
		if res.SnapshotRows%perCommit == 0 {
			if err := flush(); err != nil {
				b.Close()
				return nil, err
			}
			if err := ctx.Err(); err != nil {
				b.Close()
				return nil, err
			}
		}
	}
	if err := it.Error(); err != nil {
		b.Close()
		return nil, err
	}
	if err := flush(); err != nil {
		b.Close()
		return nil, err
	}
	b.Close()
	select {
	case <-last.Done(): // at once without uploads
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	res.Wall = time.Since(start)
	res.CPU = jobCPU(j.store) - cpuStart
	res.FinalEpoch = epoch
	if err := j.verifyCopy(); err != nil {
		return nil, err
	}
	if err := j.settle(); err != nil {
		return nil, err
	}
	res.FS = j.store.FS.Stats().Sub(fsStart)
	return res, nil
}

// verifyCopy checks that the scratch table holds exactly A's rows.
func (j *Job) verifyCopy() error {
	snap := j.store.Latest()
	defer snap.Release()
	_, err := verify.Tables(snap.Snap, j.wl.Schema(), storage.TableUpstream, verify.Span{}, storage.TableScratch, verify.Span{}, "raw copy verification", "A", "the copy")
	return err
}
