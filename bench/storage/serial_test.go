package storage

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/backfill-bench/backfill-bench/bench/meterfs"
)

// serialRun commits 24 epochs (every second a checkpoint) to a fresh checkpointed
// store with serial compactions, and returns the bytes flushed and compacted, the
// compactions the gate started, and whether any ran outside a checkpoint.
func serialRun(t *testing.T, serial bool) (flushed, compacted, compactions int64, outside bool) {
	t.Helper()
	s, err := Open(Options{FS: vfs.NewMem(), Dir: "/db", Checkpointed: true, SerialCompactions: serial,
		LSM: LSMOptions{L0CompactionThreshold: 2, LBaseMaxBytes: 256 << 10, TargetFileSize: 64 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for epoch := uint64(1); epoch <= 24; epoch++ {
		checkpoint := epoch%2 == 0
		before := s.DB.Metrics().Compact.Count
		commitRows(t, s, epoch, 400, 100, checkpoint)
		if !checkpoint && s.DB.Metrics().Compact.Count != before {
			outside = true
		}
	}
	st := s.FS.Stats()
	for _, g := range s.gates {
		compactions += g.Count()
	}
	return st.Bytes[meterfs.Flush], st.Bytes[meterfs.Compaction], compactions, outside
}

// TestSerialCompactionsRepeat: with serial compactions two runs of the same
// epochs flush and compact the same bytes, the compactions run at checkpoints
// only, and they do run (L0 reaches its trigger).
func TestSerialCompactionsRepeat(t *testing.T) {
	f1, c1, n1, out1 := serialRun(t, true)
	f2, c2, n2, out2 := serialRun(t, true)
	if c1 == 0 || n1 == 0 {
		t.Fatalf("no compaction ran (%d bytes, %d compactions): the test's L0 never reached its trigger", c1, n1)
	}
	if f1 != f2 || c1 != c2 || n1 != n2 {
		t.Errorf("two runs differ: flushed %d vs %d, compacted %d vs %d bytes, compactions %d vs %d", f1, f2, c1, c2, n1, n2)
	}
	if out1 || out2 {
		t.Error("a compaction ran on a commit that was not a checkpoint")
	}
}

// TestSerialCompactionsNeedCheckpoints: the option is refused without
// checkpoints, where there is no point to run them at.
func TestSerialCompactionsNeedCheckpoints(t *testing.T) {
	if s, err := Open(Options{FS: vfs.NewMem(), Dir: "/db", SerialCompactions: true}); err == nil {
		s.Close()
		t.Fatal("Open accepted serial compactions on a store with a WAL")
	}
}
