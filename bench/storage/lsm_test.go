package storage

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/sys/unix"

	"github.com/backfill-bench/backfill-bench/bench/meterfs"
)

// commitRows commits an epoch of rows keys, interleaved with other epochs' (each
// epoch's keys are its own, for up to 8 epochs, and their ranges overlap in L0),
// with random values of size bytes, which do not compress: a throttle's bandwidth
// slows their flushes and compactions.
func commitRows(t *testing.T, s *Store, epoch uint64, rows, size int, checkpoint bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(epoch, 1))
	b := s.DB.NewBatch()
	v := make([]byte, size)
	for i := range rows {
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		b.Set([]byte(fmt.Sprintf("k%06d", i*8+int(epoch%8))), v, nil)
	}
	if err := s.CommitEpoch(b, epoch, checkpoint); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointedFlushesEveryCheckpoint: a checkpointed store (no object store)
// writes no WAL, flushes the memtable to L0 at every checkpoint and at nothing else,
// and reopens at its last checkpoint.
func TestCheckpointedFlushesEveryCheckpoint(t *testing.T) {
	fs := vfs.NewMem()
	s, err := Open(Options{FS: fs, Dir: "/db", Checkpointed: true})
	if err != nil {
		t.Fatal(err)
	}
	for epoch := uint64(1); epoch <= 8; epoch++ {
		before, flushes := s.FS.Stats(), s.DB.Metrics().Flush.Count
		checkpoint := epoch%2 == 0
		commitRows(t, s, epoch, 1000, 100, checkpoint)
		st, n := s.FS.Stats().Sub(before), s.DB.Metrics().Flush.Count-flushes
		if checkpoint && (n != 1 || st.Bytes[meterfs.Flush] == 0) {
			t.Errorf("checkpoint %d: %d flushes, %d bytes flushed; want 1 flush of the epoch", epoch, n, st.Bytes[meterfs.Flush])
		}
		if !checkpoint && (n != 0 || st.Bytes[meterfs.Flush] != 0) {
			t.Errorf("epoch %d, not a checkpoint: %d flushes, %d bytes flushed; want none", epoch, n, st.Bytes[meterfs.Flush])
		}
		if st.Bytes[meterfs.WAL] != 0 {
			t.Errorf("epoch %d: %d bytes written to a WAL", epoch, st.Bytes[meterfs.WAL])
		}
	}
	commitRows(t, s, 9, 10, 100, false)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(Options{FS: fs, Dir: "/db", Checkpointed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if e := s.Committed(); e != 8 {
		t.Errorf("reopened at epoch %d, want 8 (the last checkpoint)", e)
	}
}

// TestCheckpointedSpillsOverTheBuffer: between checkpoints, epochs whose writes
// fill the memtable (the shared buffer's spill threshold here) flush before any
// checkpoint, as the engine's shared buffer spills its oldest epochs.
func TestCheckpointedSpillsOverTheBuffer(t *testing.T) {
	s, err := Open(Options{FS: vfs.NewMem(), Dir: "/db", Checkpointed: true, MemTableSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	flushes := s.DB.Metrics().Flush.Count
	for epoch := uint64(1); epoch <= 4; epoch++ { // 4 × 400 KB, each under half the memtable
		commitRows(t, s, epoch, 400, 1000, false)
	}
	// The spill's flush runs in the background: give it time to end.
	for deadline := time.Now().Add(5 * time.Second); s.DB.Metrics().Flush.Count == flushes && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if s.DB.Metrics().Flush.Count == flushes {
		t.Error("1.6 MB committed between checkpoints into a 1 MiB memtable, and nothing flushed")
	}
}

// TestLSMOptionsReachPebble: the LSM knobs are the DB's, as Pebble wrote them in
// its OPTIONS file, and a zero LSMOptions keeps Pebble's defaults.
func TestLSMOptionsReachPebble(t *testing.T) {
	for _, tc := range []struct {
		name string
		lsm  LSMOptions
		want []string
	}{
		{"engine", LSMOptions{L0CompactionThreshold: 4, L0StopWritesThreshold: 128, CompactionConcurrency: 4, LBaseMaxBytes: 512 << 20, TargetFileSize: 32 << 20,
			BlockSize: 64 << 10, Compression: "none"}, []string{
			"l0_compaction_threshold=4", "l0_stop_writes_threshold=128", "concurrent_compactions=4", "max_concurrent_compactions=4", "lbase_max_bytes=536870912",
			"[Level \"0\"]\n  block_restart_interval=16\n  block_size=65536\n  block_size_threshold=90\n  compression=NoCompression\n  filter_policy=none\n  filter_type=table\n  index_block_size=65536\n  target_file_size=33554432",
			"[Level \"6\"]\n  block_restart_interval=16\n  block_size=65536\n  block_size_threshold=90\n  compression=NoCompression",
		}},
		{"defaults", LSMOptions{}, []string{"l0_compaction_threshold=4", "l0_stop_writes_threshold=12", "concurrent_compactions=1", "lbase_max_bytes=67108864",
			"block_size=4096\n  block_size_threshold=90\n  compression=Snappy"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			s, err := Open(Options{FS: fs, Dir: "/db", LSM: tc.lsm})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			text := optionsFile(t, fs)
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("the OPTIONS file has no %q:\n%s", w, text)
				}
			}
			// The engine's sstables double every second level below the base.
			o := &pebble.Options{}
			tc.lsm.apply(o)
			if tc.lsm.TargetFileSize > 0 {
				want := [7]int64{32 << 20, 32 << 20, 32 << 20, 64 << 20, 64 << 20, 128 << 20, 128 << 20}
				if o.TargetFileSizes != want {
					t.Errorf("target file sizes %v, want %v", o.TargetFileSizes, want)
				}
			}
		})
	}
}

// optionsFile reads the OPTIONS file Pebble wrote in /db.
func optionsFile(t *testing.T, fs vfs.FS) string {
	t.Helper()
	names, err := fs.List("/db")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "OPTIONS-") {
			f, err := fs.Open("/db/" + n)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			b, err := io.ReadAll(f)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
	t.Fatalf("no OPTIONS file in /db: %v", names)
	return ""
}

// TestStallsSplitByCause provokes each kind of write stall and sees it counted
// under its own cause, each stall under one. A memtable stall: two 1 MiB memtables
// held, an epoch of 1.5 MB (a flushable batch) and the next one commit while the
// first flushes through a 4 MiB/s disk. An L0 stall: a checkpointed store whose L0
// compacts at 3 sublevels and stops writes at 3: the fourth checkpoint's flush
// waits for the compaction the third began, which writes the three epochs' rows
// through a 2 MiB/s disk.
func TestStallsSplitByCause(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		run  func(*Store)
		l0   bool // the stall expected: L0's, or else the memtables'
	}{
		{"memtable", Options{MemTableSize: 1 << 20, MemTables: 2}, func(s *Store) {
			commitRows(t, s, 1, 1500, 1000, false)
			commitRows(t, s, 2, 600, 1000, false)
		}, false},
		{"L0", Options{Checkpointed: true, LSM: LSMOptions{L0CompactionThreshold: 3, L0StopWritesThreshold: 3}}, func(s *Store) {
			for epoch := uint64(1); epoch <= 4; epoch++ {
				commitRows(t, s, epoch, 100, 1000, true)
			}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bw := int64(4 << 20)
			if tc.l0 {
				bw = 2 << 20
			}
			o := tc.opts
			o.FS, o.Dir, o.Throttle = vfs.NewMem(), "/db", meterfs.NewThrottle(meterfs.ThrottleConfig{WriteBandwidth: bw})
			s, err := Open(o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			tc.run(s)
			lsm := s.LSM()
			t.Logf("%d stalls (%v): %d memtable (%v), %d L0 (%v)", lsm.Stalls, lsm.StallTime, lsm.MemTableStalls, lsm.MemTableStallTime, lsm.L0Stalls, lsm.L0StallTime)
			if lsm.MemTableStalls+lsm.L0Stalls != lsm.Stalls || lsm.MemTableStallTime+lsm.L0StallTime != lsm.StallTime {
				t.Errorf("%d stalls of %v, but %d memtable stalls of %v and %d L0 stalls of %v", lsm.Stalls, lsm.StallTime,
					lsm.MemTableStalls, lsm.MemTableStallTime, lsm.L0Stalls, lsm.L0StallTime)
			}
			stalls, stallTime := lsm.MemTableStalls, lsm.MemTableStallTime
			if tc.l0 {
				stalls, stallTime = lsm.L0Stalls, lsm.L0StallTime
			}
			if stalls == 0 || stallTime <= 0 {
				t.Errorf("no %s stall counted: %d of %v", tc.name, stalls, stallTime)
			}
		})
	}
}

// TestOffloadedCompactionCPU: with compactions offloaded, a compaction's CPU is
// counted as the compactions', not the job's: while the test's goroutine only waits
// for a large manual compaction, most of the process's CPU is the compaction's;
// while it burns CPU itself and no compaction runs, the compactions' count stays.
func TestOffloadedCompactionCPU(t *testing.T) {
	s, err := Open(Options{FS: vfs.NewMem(), Dir: "/db", OffloadCompactions: true, LSM: LSMOptions{L0CompactionThreshold: 50, L0StopWritesThreshold: 100}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Overlapping L0 tables that a full compaction merges: 10 × 10 000 keys.
	flushOverlapping(t, s.DB, 10, 10000)
	compactCPU := func() time.Duration {
		c, err := s.CompactionCPU()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	proc0, comp0 := processCPU(t), compactCPU()
	if err := s.DB.Compact(context.Background(), []byte("k"), []byte("l"), false); err != nil {
		t.Fatal(err)
	}
	proc, comp := processCPU(t)-proc0, compactCPU()-comp0
	job := proc - comp
	t.Logf("compaction window: process %v, compactions %v, job %v", proc, comp, job)
	if comp <= 0 || job > proc/2 {
		t.Errorf("while only a compaction ran, the process used %v and the compactions %v: the job's share %v is over half", proc, comp, job)
	}

	comp0 = compactCPU()
	burn := time.Now()
	for x := 0; time.Since(burn) < 50*time.Millisecond; x++ {
		_ = x * x
	}
	if c := compactCPU() - comp0; c != 0 {
		t.Errorf("no compaction ran, yet the compactions' CPU grew by %v", c)
	}
}

// TestOffloadedCompactionCountsItsWriter: the CPU of a compaction's sstable
// writer, which copies its data blocks to the file on a goroutine of its own, is
// the compactions', not the job's. Every write to an sstable during a manual
// compaction burns 1 ms of its thread's CPU; the compactions' CPU must grow by at
// least what was burned (it does not when only the compaction's own goroutine is
// metered: the data blocks are the writer's).
func TestOffloadedCompactionCountsItsWriter(t *testing.T) {
	fs := &burningFS{FS: vfs.NewMem()}
	s, err := Open(Options{FS: fs, Dir: "/db", OffloadCompactions: true, LSM: LSMOptions{L0CompactionThreshold: 50, L0StopWritesThreshold: 100}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	flushOverlapping(t, s.DB, 4, 10000)
	comp0, err := s.CompactionCPU()
	if err != nil {
		t.Fatal(err)
	}
	fs.burn.Store(true)
	err = s.DB.Compact(context.Background(), []byte("k"), []byte("l"), false)
	fs.burn.Store(false)
	if err != nil {
		t.Fatal(err)
	}
	comp, err := s.CompactionCPU()
	if err != nil {
		t.Fatal(err)
	}
	burned := time.Duration(fs.burned.Load())
	t.Logf("burned %v in %d sstable writes; the compactions' CPU grew by %v", burned, fs.writes.Load(), comp-comp0)
	if fs.writes.Load() < 2 {
		t.Fatalf("the compaction wrote %d times to sstables: too few to tell its goroutines apart", fs.writes.Load())
	}
	if comp-comp0 < burned {
		t.Errorf("the compaction's writes burned %v of CPU, but the compactions' CPU grew by only %v: some of the compaction was counted as the job's", burned, comp-comp0)
	}
}

// TestOffloadedCompactionsRunOnTheirOwn: with compactions offloaded (the store's own
// scheduler grants them), L0 past its threshold compacts without being asked, and
// Close stops the scheduler.
func TestOffloadedCompactionsRunOnTheirOwn(t *testing.T) {
	s, err := Open(Options{FS: vfs.NewMem(), Dir: "/db", OffloadCompactions: true, LSM: LSMOptions{L0CompactionThreshold: 2, CompactionConcurrency: 2}})
	if err != nil {
		t.Fatal(err)
	}
	flushOverlapping(t, s.DB, 12, 2000)
	deadline := time.Now().Add(10 * time.Second)
	for s.DB.Metrics().Levels[0].TablesCount >= 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	m := s.DB.Metrics()
	if n := m.Levels[0].TablesCount; n >= 2 {
		t.Errorf("L0 still holds %d tables 10 s after 12 flushes: no compaction was granted", n)
	}
	if m.Compact.Count == 0 {
		t.Error("no compaction ran")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// burningFS burns 1 ms of the calling thread's CPU in every write to an sstable
// while burn is set, and counts it.
type burningFS struct {
	vfs.FS
	burn           atomic.Bool
	burned, writes atomic.Int64
}

func (fs *burningFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	if err != nil || !strings.HasSuffix(name, ".sst") {
		return f, err
	}
	return burningFile{f, fs}, nil
}

type burningFile struct {
	vfs.File
	fs *burningFS
}

func (f burningFile) Write(p []byte) (int, error) {
	if f.fs.burn.Load() {
		start := ownCPU()
		for ownCPU()-start < time.Millisecond {
		}
		f.fs.burned.Add(int64(ownCPU() - start))
		f.fs.writes.Add(1)
	}
	return f.File.Write(p)
}

// flushOverlapping flushes tables L0 tables of keys keys each, spread over one
// range, so that they overlap and a compaction merges them.
func flushOverlapping(t *testing.T, db *pebble.DB, tables, keys int) {
	t.Helper()
	for n := 1; n <= tables; n++ {
		b := db.NewBatch()
		for i := range keys {
			b.Set([]byte(fmt.Sprintf("k%08d", (i*7919+n*13)%100000)), bytes.Repeat([]byte{byte(n)}, 50), nil)
		}
		if err := db.Apply(b, pebble.NoSync); err != nil {
			t.Fatal(err)
		}
		b.Close()
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
}

func processCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestOpenRefusesBadOptions: options that cannot go together, or that Pebble does
// not know, are an error that names them, not Pebble's default or one of the two.
func TestOpenRefusesBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  Options
		names []string
	}{
		{"unknown compression", Options{LSM: LSMOptions{Compression: "lz4"}}, []string{`"lz4"`}},
		{"serial and offloaded", Options{Checkpointed: true, SerialCompactions: true, OffloadCompactions: true}, []string{"SerialCompactions", "OffloadCompactions"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.FS, tc.opts.Dir = vfs.NewMem(), "/db"
			s, err := Open(tc.opts)
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			for _, n := range tc.names {
				if !strings.Contains(err.Error(), n) {
					t.Errorf("error %q does not name %s", err, n)
				}
			}
		})
	}
}

// ownCPU is the calling thread's CPU time, as the thread reads its own clock.
func ownCPU() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}
