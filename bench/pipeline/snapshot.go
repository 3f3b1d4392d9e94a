package pipeline

import (
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/backfill-bench/backfill-bench/bench/backfill"
)

// The snapshot scan's creating job is controlled by bench/creatingjob; the
// collector commits its epochs here.

// collectCreating is the collector's: it takes a creating part and commits every
// creating epoch whose parts are all in, in order.
func (c *collector) collectCreating(p backfill.Part) error {
	return c.cj.Collect(p, c.commitCreating)
}

// commitCreating commits one creating epoch: its MV and state rows, apart from the
// upstream's epochs.
func (c *collector) commitCreating(seq uint64, parts []backfill.Part) error {
	cj := c.cj
	slices.SortFunc(parts, func(a, b backfill.Part) int { return a.Actor - b.Actor })
	bar := parts[0].Barrier
	tr := EpochTrace{Epoch: seq, Injected: bar.Injected, Checkpoint: bar.Checkpoint, Replayed: bar.Replay}
	var batches []*pebble.Batch
	finished := true
	for _, a := range parts {
		batches = append(batches, a.MV...)
	}
	for _, a := range parts {
		batches = append(batches, a.State)
		tr.SnapshotRows += a.SnapshotRows
		tr.UpstreamRows += a.UpstreamRows
		tr.StateRows += a.StateRows
		tr.StateBytes += a.StateBytes
		tr.StateTime += a.StateTime
		tr.Phases = tr.Phases.Add(a.Phases)
		tr.Rebuilds += a.Rebuilds
		c.res.Logical.MV += a.MVBytes
		c.res.Logical.State += a.StateBytes
		c.netRows += a.NetRows
		finished = finished && a.Finished
	}
	if c.progress != nil {
		if err := c.progress.CommitCreating(c.store, seq, parts); err != nil {
			for _, p := range batches {
				p.Close()
			}
			return err
		}
	}
	b, err := applyAll(c.store.DB, batches, 64) // 64: room for the creating_epoch row
	if err != nil {
		return fmt.Errorf("creating epoch %d: %w", seq, err)
	}
	data := cj.DataEpoch()
	if bar.Replay > 0 {
		data = bar.Replay
	}
	if c.record != nil { // the replay baseline commits it too, in commit order
		if err := c.record.Add(RecordedEpoch{Epoch: seq, Creating: true, DataEpoch: data, Checkpoint: bar.Checkpoint,
			SnapshotRows: tr.SnapshotRows, UpstreamRows: tr.UpstreamRows, At: time.Since(c.start)}, b.Repr()); err != nil {
			b.Close()
			return err
		}
	}
	committing := time.Now()
	upload, err := c.store.CommitCreatingAsync(b, seq, data, bar.Checkpoint)
	if err != nil {
		return err
	}
	if upload != nil { // its latency ends with the upload, in awaitUploads
		c.creatingUploads = append(c.creatingUploads, epochUpload{len(c.res.Creating), upload})
	}
	if c.progress != nil {
		if err := c.progress.CommittedCreating(c.store, seq); err != nil {
			return err
		}
	}
	now := time.Now()
	tr.Commit = now.Sub(committing)
	tr.Latency = now.Sub(tr.Injected)
	tr.CPU = jobCPU(c.store) - c.cpuStart
	tr.Lag = cj.CreatingCommitted(seq, finished, bar.Replay)
	c.res.Creating = append(c.res.Creating, tr)
	c.res.SnapshotRows += tr.SnapshotRows
	c.res.UpstreamRows += tr.UpstreamRows
	// The upstream epoch that commits next carries the creating work's direct
	// costs in its trace, so per-epoch state figures stay whole.
	p := &c.creatingPending
	p.StateRows += tr.StateRows
	p.StateBytes += tr.StateBytes
	p.StateTime += tr.StateTime
	c.log.Debug("creating epoch committed", "epoch", seq, "latency", tr.Latency, "snapshot_rows", tr.SnapshotRows, "replayed", bar.Replay, "lag", tr.Lag)
	return nil
}

// takePending moves the creating work's state figures into upstream trace tr.
func (c *collector) takePending(tr *EpochTrace) {
	tr.StateRows += c.creatingPending.StateRows
	tr.StateBytes += c.creatingPending.StateBytes
	tr.StateTime += c.creatingPending.StateTime
	c.creatingPending = EpochTrace{}
}
