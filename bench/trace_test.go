package bench_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/bench"
	"github.com/backfill-bench/backfill-bench/bench/meterfs"
	"github.com/backfill-bench/backfill-bench/bench/pipeline"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/jobtrace"
	"github.com/backfill-bench/backfill-bench/contract/rates"
)

// TestEpochsCarryLSMState: a job with a 1 MiB memtable and epochs over half of it
// flushes and compacts while it runs, and its epochs show it: L0 files and
// sublevels, a read amplification above one, memtables counted, compaction debt
// or compactions; an epoch whose commit waited in a write stall has the stall and
// its time too; the epochs' stalls add up to no more than the store counted from
// the job's start (none from loading A). The trace file the bench binary writes
// (-trace) carries every LSM field, read back with the contract's reader. Whether
// the job stalls at all depends on how fast flushes go, so stalls are checked for
// consistency, not required (the storage tests make one happen).
func TestEpochsCarryLSMState(t *testing.T) {
	cfg := pipeline.Default()
	cfg.Rows, cfg.Par, cfg.Vnodes, cfg.Seed = 100_000, 2, 16, 9
	cfg.ChunkSize, cfg.ChangeEpochs, cfg.SettleWait = 64, 30, 100*time.Millisecond
	cfg.MemTableSize = 1 << 20
	// Epochs of 600 KiB, over half the memtable: each is a flushable batch, which
	// queues memtables and may stall writes.
	cfg.BarrierRows, cfg.ChangesPerEpoch = 15000, 50
	j, err := pipeline.Prepare(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	before := j.Store().LSM().Stalls
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := j.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}

	var l0, sublevels, readAmp, memtables, stalls, stallBytes int64
	var debt uint64
	var stallTime time.Duration
	for _, e := range res.Epochs {
		l0, sublevels, readAmp = max(l0, e.LSM.L0Files), max(sublevels, int64(e.LSM.L0Sublevels)), max(readAmp, int64(e.LSM.ReadAmp))
		memtables, debt = max(memtables, e.LSM.Memtables), max(debt, e.LSM.CompactionDebt)
		stalls, stallBytes, stallTime = stalls+e.LSM.Stalls, stallBytes+e.LSM.StallBytes, stallTime+e.LSM.StallTime
		// A commit's stall begins and ends inside it, before the epoch's LSM is read.
		if e.LSM.StallBytes > 0 && (e.LSM.Stalls == 0 || e.LSM.StallTime <= 0) {
			t.Errorf("epoch %d: %d bytes waited in a write stall, but the epoch shows %d stalls of %v", e.Epoch, e.LSM.StallBytes, e.LSM.Stalls, e.LSM.StallTime)
		}
		// Every stall has one cause.
		if e.LSM.MemTableStalls+e.LSM.L0Stalls != e.LSM.Stalls || e.LSM.MemTableStallTime+e.LSM.L0StallTime != e.LSM.StallTime {
			t.Errorf("epoch %d: %d stalls of %v, but %d memtable stalls of %v and %d L0 stalls of %v", e.Epoch, e.LSM.Stalls, e.LSM.StallTime,
				e.LSM.MemTableStalls, e.LSM.MemTableStallTime, e.LSM.L0Stalls, e.LSM.L0StallTime)
		}
	}
	compacted := res.FS.Bytes[meterfs.Compaction]
	t.Logf("%d epochs; most L0 files %d, sublevels %d, read amp %d, memtables %d, compaction debt %d B; %d stalls, %v, %d B; flushed %d B, compacted %d B during the job",
		len(res.Epochs), l0, sublevels, readAmp, memtables, debt, stalls, stallTime, stallBytes, res.FS.Bytes[meterfs.Flush], compacted)
	if res.FS.Bytes[meterfs.Flush] == 0 || l0 == 0 || sublevels == 0 || readAmp < 2 || memtables < 1 {
		t.Errorf("the job flushed %d bytes, but its epochs show at most %d L0 files in %d sublevels, read amp %d, %d memtables", res.FS.Bytes[meterfs.Flush], l0, sublevels, readAmp, memtables)
	}
	if debt == 0 && compacted == 0 {
		t.Error("no epoch shows compaction debt, and no compaction ran during the job")
	}
	if stalls > 0 && stallTime <= 0 {
		t.Errorf("%d write stalls taking no time", stalls)
	}
	// Run also settles after the final commit, and the settle's flush may stall
	// once more: the epochs hold at most what the store counted, never the load's.
	if during := j.Store().LSM().Stalls - before; stalls > during {
		t.Errorf("the epochs' stalls add up to %d, more than the %d the store counted from the job's start", stalls, during)
	}

	// The trace file, as BenchmarkBackfill writes it for -trace.
	cell := contract.Cell{Profile: "mem", Workload: "narrow", Rows: cfg.Rows, Scan: "merged", Barrier: rates.Cadence{Rows: cfg.BarrierRows}, Vnodes: cfg.Vnodes, Par: cfg.Par}
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := jobtrace.AppendTrace(path, bench.NewTrace(cell, res)); err != nil {
		t.Fatal(err)
	}
	traces, err := jobtrace.ReadTraceFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != 1 || traces[0].Cell != cell.Name() || len(traces[0].Epochs) != len(res.Epochs) {
		t.Fatalf("read back %d traces (%+v), want one of %s with %d epochs", len(traces), traces, cell.Name(), len(res.Epochs))
	}
	for i, e := range traces[0].Epochs {
		m := res.Epochs[i].LSM
		if e.LSM == nil {
			t.Fatalf("epoch %d: no lsm in the trace", e.Epoch)
		}
		want := jobtrace.TraceLSM{L0Files: m.L0Files, L0Sublevels: m.L0Sublevels, CompactionDebt: m.CompactionDebt, Memtables: m.Memtables,
			ReadAmp: m.ReadAmp, Stalls: m.Stalls, StallSec: e.LSM.StallSec, StallBytes: m.StallBytes,
			MemTableStalls: m.MemTableStalls, MemTableStallSec: e.LSM.MemTableStallSec, L0Stalls: m.L0Stalls, L0StallSec: e.LSM.L0StallSec}
		if *e.LSM != want || math.Abs(e.LSM.StallSec-m.StallTime.Seconds()) > 1e-9 ||
			math.Abs(e.LSM.MemTableStallSec-m.MemTableStallTime.Seconds()) > 1e-9 || math.Abs(e.LSM.L0StallSec-m.L0StallTime.Seconds()) > 1e-9 {
			t.Errorf("epoch %d: the trace's LSM is %+v, the job's %+v", e.Epoch, *e.LSM, m)
		}
	}
	// Every field is in the file under its name, zero or not.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Epochs []struct {
			LSM map[string]json.RawMessage `json:"lsm"`
		} `json:"epochs"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	fields := []string{"compaction_debt_bytes", "l0_files", "l0_stall_sec", "l0_stalls", "l0_sublevels", "memtable_stall_sec", "memtable_stalls", "memtables", "read_amp", "write_stall_bytes", "write_stall_sec", "write_stalls"}
	for _, e := range raw.Epochs {
		var keys []string
		for k := range e.LSM {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, fields) {
			t.Fatalf("an epoch's lsm in the trace file has %s, want %s", strings.Join(keys, ", "), strings.Join(fields, ", "))
		}
	}
}

// TestTraceCarriesPersistBytes: the trace has persist-B/op's parts, which add up to
// the metric, and none without state rows.
func TestTraceCarriesPersistBytes(t *testing.T) {
	for _, state := range []int64{0, 2500} {
		r := &pipeline.Result{Logical: pipeline.LogicalBytes{Upstream: 1000, MV: 9000, State: state}}
		r.FS.Bytes[meterfs.WAL], r.FS.Bytes[meterfs.Compaction] = 13750, 10000
		tr := bench.NewTrace(contract.Cell{}, r)
		var sum int64
		for _, b := range tr.Persist {
			sum += b
		}
		metrics, _ := bench.Metrics(r)
		i := slices.IndexFunc(metrics, func(m bench.Metric) bool { return m.Unit == contract.UnitPersistBytes })
		if i < 0 || float64(sum) != metrics[i].Value || (state == 0) != (tr.Persist == nil) {
			t.Errorf("state %d B: trace's persist bytes %v (sum %d), metrics %v", state, tr.Persist, sum, metrics)
		}
		if state > 0 && (tr.Persist["logical"] != state || tr.Persist["wal"] != 2750 || tr.Persist["compaction"] != 2000) {
			t.Errorf("state %d B: trace's persist bytes %v, want logical %d, wal 2750, compaction 2000", state, tr.Persist, state)
		}
	}
}
