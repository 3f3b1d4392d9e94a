package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/backfill-bench/backfill-bench/bench/meterfs"
	"github.com/backfill-bench/backfill-bench/bench/pipeline"
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
}

// TraceEpoch is one committed epoch.
type TraceEpoch struct {
	Epoch        uint64  `json:"epoch"`
	AtSec        float64 `json:"at_sec"` // barrier injection, from the first barrier's
	LatencySec   float64 `json:"latency_sec"`
	Checkpoint   bool    `json:"checkpoint"`
	SnapshotRows int64   `json:"snapshot_rows"`
	UpstreamRows int64   `json:"upstream_rows"`
}

// NewTrace makes the trace of one job of the cell.
func NewTrace(c Cell, r *pipeline.Result) Trace {
	t := Trace{
		Cell: c.Name(), WallSec: r.Wall.Seconds(), LoadSec: r.Load.Seconds(),
		SnapshotRows: r.SnapshotRows, UpstreamRows: r.UpstreamRows,
		FSBytes: map[string]int64{}, FSSyncs: map[string]int64{},
		Logical: map[string]int64{"upstream": r.Logical.Upstream, "mv": r.Logical.MV, "state": r.Logical.State},
	}
	for _, cat := range meterfs.Categories() {
		t.FSBytes[cat.String()] = r.FS.Bytes[cat]
		t.FSSyncs[cat.String()] = r.FS.Syncs[cat]
	}
	for _, e := range r.Epochs {
		t.Epochs = append(t.Epochs, TraceEpoch{
			Epoch: e.Epoch, AtSec: e.Injected.Sub(r.Epochs[0].Injected).Seconds(), LatencySec: e.Latency.Seconds(),
			Checkpoint: e.Checkpoint, SnapshotRows: e.SnapshotRows, UpstreamRows: e.UpstreamRows,
		})
	}
	return t
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
