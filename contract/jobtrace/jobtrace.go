// Package jobtrace is the trace schema: the detail of one job that does not fit a benchfmt
// line (per-epoch rows and latencies, bytes per category), one JSON object per line.
package jobtrace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Trace is the detail of one job that does not fit a benchfmt line, for plots: a
// trace file holds one Trace per line as JSON.
type Trace struct {
	Cell         string           `json:"cell"`
	WallSec      float64          `json:"wall_sec"`
	LoadSec      float64          `json:"load_sec"`
	SnapshotRows int64            `json:"snapshot_rows"`
	UpstreamRows int64            `json:"upstream_rows"`
	Epochs       []TraceEpoch     `json:"epochs"`
	FSBytes      map[string]int64 `json:"fs_bytes"` // physical bytes per write category
	FSSyncs      map[string]int64 `json:"fs_syncs"`
	Logical      map[string]int64 `json:"logical_bytes"` // per table: upstream, mv, state
	// What persisting state added (persist-B/op), per category: the state rows'
	// logical bytes and their share of the wal, flush and compaction bytes; absent
	// with persist=off.
	Persist map[string]int64 `json:"persist_bytes,omitempty"`

	// Snapshot scan: the creating job's own epochs (AtSec from the upstream's first
	// barrier), with the upstream epoch each replayed and its lag.
	Creating []TraceCreatingEpoch `json:"creating_epochs,omitempty"`
}

// TraceCreatingEpoch is one committed epoch of a snapshot scan's creating job.
type TraceCreatingEpoch struct {
	Epoch        uint64  `json:"epoch"`
	AtSec        float64 `json:"at_sec"`
	LatencySec   float64 `json:"latency_sec"`
	SnapshotRows int64   `json:"snapshot_rows"`
	UpstreamRows int64   `json:"upstream_rows"` // change-log rows replayed
	Replayed     uint64  `json:"replayed_epoch,omitempty"`
	LagEpochs    int64   `json:"lag_epochs"`
	Rebuilds     int     `json:"rebuilds,omitempty"`
}

// TraceEpoch is one committed epoch.
type TraceEpoch struct {
	Epoch        uint64  `json:"epoch"`
	AtSec        float64 `json:"at_sec"` // barrier injection, from the first barrier's
	LatencySec   float64 `json:"latency_sec"`
	Checkpoint   bool    `json:"checkpoint"`
	SnapshotRows int64   `json:"snapshot_rows"`
	UpstreamRows int64   `json:"upstream_rows"`
	// Where the epoch's time went, in seconds: the actors' phases summed over
	// actors (reopening the scan, scanning, waiting with their rows read, handling
	// the barrier; "wait" for the previous commit in traces of bench binaries whose
	// scan waited), then the collector's building of the epoch batch and its commit.
	Phases map[string]float64 `json:"phases_sec,omitempty"`
	// The epoch's scans: the most epochs an actor's snapshot was behind the epoch it
	// read, and the writes to A the actors buffered for checkpoint reads.
	ReadLag  uint64    `json:"read_lag_epochs,omitempty"`
	Buffered int64     `json:"buffered_writes,omitempty"`
	LSM      *TraceLSM `json:"lsm,omitempty"`
}

// TraceLSM is the LSM once an epoch committed, and its write stalls during the epoch.
type TraceLSM struct {
	L0Files        int64   `json:"l0_files"`
	L0Sublevels    int32   `json:"l0_sublevels"`
	CompactionDebt uint64  `json:"compaction_debt_bytes"`
	Memtables      int64   `json:"memtables"` // the mutable one and those queued for flush
	ReadAmp        int     `json:"read_amp"`
	Stalls         int64   `json:"write_stalls"`
	StallSec       float64 `json:"write_stall_sec"`
	// Bytes of the epoch's commits that waited in a write stall (Pebble charges
	// the wait to the batch that met it).
	StallBytes int64 `json:"write_stall_bytes"`
	// The write stalls split by cause: the memtables full (waiting for a flush),
	// or L0 at its stop threshold (waiting for compactions), by the cause each began with.
	MemTableStalls   int64   `json:"memtable_stalls"`
	MemTableStallSec float64 `json:"memtable_stall_sec"`
	L0Stalls         int64   `json:"l0_stalls"`
	L0StallSec       float64 `json:"l0_stall_sec"`
}

// AppendTrace adds t as a line to the trace file, creating it if needed.
func AppendTrace(path string, t Trace) error {
	line, err := json.Marshal(t)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("trace %s: %w", path, err)
	}
	return f.Close()
}

// ReadTraces reads a trace file's lines.
func ReadTraces(r io.Reader, name string) ([]Trace, error) {
	var out []Trace
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		var t Trace
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			return out, fmt.Errorf("trace %s:%d: %w", name, n, err)
		}
		out = append(out, t)
	}
	return out, sc.Err()
}

// ReadTraceFile reads the traces of one file.
func ReadTraceFile(path string) ([]Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadTraces(f, path)
}
