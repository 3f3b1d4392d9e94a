// Package baseline holds the references a backfill is measured against, run on a
// prepared pipeline.Job: the append-order raw copy, the replay of a recorded
// backfill's epoch batches, and the scan-only read.
package baseline

import (
	"context"
	"runtime"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/backfill-bench/backfill-bench/bench/pipeline"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/verify"
)

// RawCopy is the physical limit a backfill is measured against: one iterator scans A
// and its rows are batch-written to a scratch table, chunk by chunk, with no stream,
// no merge and no filter; one synced commit per barrier-sized batch. It verifies the
// copy and measures it like Run. A prepared job runs either Run or RawCopy, once.
func RawCopy(ctx context.Context, j *pipeline.Job) (*pipeline.Result, error) {
	res, err := j.Claim()
	if err != nil {
		return nil, err
	}
	fsStart := j.Store().FS.Stats()
	used := startUsage(j)
	start := time.Now()

	snap := j.Store().Latest()
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
	perCommit := int64(64 * j.Config().ChunkSize)
	epoch := snap.Epoch
	b := j.Store().DB.NewBatch()
	key := make([]byte, 0, 64)
	var last *storage.Upload // uploads end in commit order: the last ends after all
	flush := func() error {
		epoch++
		u, err := j.Store().CommitEpochAsync(b, epoch, true)
		if u != nil {
			last = u
		}
		b = j.Store().DB.NewBatch()
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
	used.end(j, res)
	res.FinalEpoch = epoch
	if err := verifyCopy(j); err != nil {
		return nil, err
	}
	if err := j.Settle(); err != nil {
		return nil, err
	}
	res.FS = j.Store().FS.Stats().Sub(fsStart)
	return res, nil
}

// verifyCopy checks that the scratch table holds exactly A's rows.
func verifyCopy(j *pipeline.Job) error {
	snap := j.Store().Latest()
	defer snap.Release()
	_, err := verify.Tables(snap.Snap, j.Schema(), storage.TableUpstream, verify.Span{}, storage.TableScratch, verify.Span{}, "raw copy verification", "A", "the copy")
	return err
}

// usage marks the process's CPU (less offloaded compactions', as a job counts it)
// and its heap allocations, so that a baseline reports both as a job does.
type usage struct {
	cpu           time.Duration
	allocs, bytes uint64
}

func startUsage(j *pipeline.Job) usage {
	pipeline.StartWindow()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return usage{cpu: j.CPU(), allocs: m.Mallocs, bytes: m.TotalAlloc}
}

// end sets res's CPU and allocations to what was used since u.
func (u usage) end(j *pipeline.Job, res *pipeline.Result) {
	res.CPU = j.CPU() - u.cpu
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	res.Allocs, res.AllocBytes = m.Mallocs-u.allocs, m.TotalAlloc-u.bytes
}
