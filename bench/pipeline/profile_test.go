package pipeline

import (
	"math"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/backfill"
	"github.com/backfill-bench/backfill-bench/bench/meterfs"
	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/bench/storage"
	"github.com/backfill-bench/backfill-bench/bench/verify"
)

func TestUseProfile(t *testing.T) {
	disk := profile.Profile{Name: "d", Version: 1, FS: profile.FSDisk, Dir: t.TempDir(), BlockCache: 1 << 20, MemTable: 1 << 20, SyncLatency: time.Millisecond}
	for _, p := range []profile.Profile{profile.Builtin()[0], disk} {
		t.Run(p.Name, func(t *testing.T) {
			cfg := Default()
			cleanup, err := cfg.UseProfile(p)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.FS == nil || cfg.CacheSize != p.BlockCache || cfg.MemTableSize != uint64(p.MemTable) || (cfg.Throttle != nil) != p.Simulated() {
				t.Errorf("config %+v does not follow profile %+v", cfg, p)
			}
			if _, err := cfg.FS.Stat(cfg.Dir); p.FS == profile.FSDisk && err != nil {
				t.Errorf("job directory: %v", err)
			}
			cleanup()
			if _, err := os.Stat(cfg.Dir); p.FS == profile.FSDisk && !os.IsNotExist(err) {
				t.Errorf("job directory %s left behind: %v", cfg.Dir, err)
			}
		})
	}
}

// TestProfileCompressionsReachStorage: every compression a profile may name is one
// the store gives Pebble, and UseProfile passes the engine's blocks and compression.
func TestProfileCompressionsReachStorage(t *testing.T) {
	for _, c := range profile.Compressions {
		if storage.Compressions[c] == nil {
			t.Errorf("profile compression %q is not the store's", c)
		}
	}
	p := builtinProfile(t, "engine")
	cfg := Default()
	cleanup, err := cfg.UseProfile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if cfg.LSM.BlockSize != 64<<10 || cfg.LSM.Compression != "none" {
		t.Errorf("engine's LSM reaches the job as %+v, want 64 KiB blocks and no compression", cfg.LSM)
	}
}

// TestDiskProfileRefusesTmpfs: a disk profile whose directory is on tmpfs is
// memory in disguise, refused unless the profile allows it.
func TestDiskProfileRefusesTmpfs(t *testing.T) {
	if _, err := os.Stat("/dev/shm"); err != nil {
		t.Skip("no /dev/shm here")
	}
	if fs, err := profile.Filesystem("/dev/shm"); err != nil || fs != "tmpfs" {
		t.Skipf("/dev/shm is %q (%v), not tmpfs", fs, err)
	}
	p := profile.Profile{Name: "d", Version: 1, FS: profile.FSDisk, Dir: "/dev/shm", BlockCache: 1 << 20, MemTable: 1 << 20}
	cfg := Default()
	if _, err := cfg.UseProfile(p); err == nil || !strings.Contains(err.Error(), "tmpfs") {
		t.Errorf("err = %v, want tmpfs refused", err)
	}
	p.AllowTmpfs = true
	cleanup, err := cfg.UseProfile(p)
	if err != nil {
		t.Fatal(err)
	}
	cleanup()
}

// TestCheckpointedProfilesFlushEveryCheckpoint: a job on hummock or engine (no WAL,
// checkpoints flush to L0) writes no WAL, flushes once per checkpoint at least (a
// spill may add more) and compacts within the job, and still verifies; on engine
// its compactions' CPU is counted apart from the job's. A smaller job than the
// quick suite's 300 000 rows, with ~60 checkpoints.
func TestCheckpointedProfilesFlushEveryCheckpoint(t *testing.T) {
	for _, name := range []string{"hummock", "engine"} {
		t.Run(name, func(t *testing.T) {
			p := builtinProfile(t, name)
			_, res := runCheckpointedJob(t, p, Default().Scan)
			var ckpts int64
			for _, e := range res.Epochs {
				if e.Checkpoint {
					ckpts++
				}
			}
			flushes := res.FS.Syncs[meterfs.Flush]
			t.Logf("%d checkpoints: %d flushed sstables, %d B flushed, %d B compacted, %d B of WAL; compactions' CPU %v, the job's %v",
				ckpts, flushes, res.FS.Bytes[meterfs.Flush], res.FS.Bytes[meterfs.Compaction], res.FS.Bytes[meterfs.WAL], res.CompactCPU, res.CPU)
			if res.FS.Bytes[meterfs.WAL] != 0 || flushes < ckpts || res.FS.Bytes[meterfs.Flush] == 0 {
				t.Errorf("%d checkpoints, but %d sstables flushed (%d B) and %d B of WAL: want a flush per checkpoint and no WAL",
					ckpts, flushes, res.FS.Bytes[meterfs.Flush], res.FS.Bytes[meterfs.WAL])
			}
			if res.FS.Bytes[meterfs.Compaction] == 0 {
				t.Error("nothing compacted during the job")
			}
			if offloaded := p.Compaction == profile.CompactionOffloaded; offloaded != (res.CompactCPU > 0) {
				t.Errorf("compaction %q, but the compactions' CPU counted apart is %v", p.Compaction, res.CompactCPU)
			}
		})
	}
}

// runCheckpointedJob runs a job smaller than the quick suite's (12 000 rows, 16
// vnodes, persist on, a barrier every 200 rows: ~60 checkpoints) on profile p with
// scan, and returns it (closed when the test ends) and its result.
func runCheckpointedJob(t *testing.T, p profile.Profile, scan backfill.Scan) (*Job, *Result) {
	t.Helper()
	cfg := Default()
	cleanup, err := cfg.UseProfile(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	cfg.Scan = scan
	cfg.Rows, cfg.Vnodes, cfg.Persist, cfg.BarrierRows, cfg.ChangesPerEpoch, cfg.SettleWait = 12_000, 16, true, 200, 2, 100*time.Millisecond
	j, err := Prepare(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	res, err := j.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return j, res
}

// TestHummockBytesRepeat: two jobs on hummock (serial compactions, compaction
// groups) flush the same bytes and compact the same bytes with the snapshot scan
// (whose upstream and creating job commit apart), within 1 % with the merged scan
// (its actors release their snapshots of earlier epochs when they get to it, and
// a compaction keeps the versions a snapshot still open needs); and the creating
// job's tables live in a group of their own: the upstream's DB holds no MV row,
// the job's every one.
func TestHummockBytesRepeat(t *testing.T) {
	p := builtinProfile(t, "hummock")
	for _, tc := range []struct {
		scan  backfill.Scan
		bound float64 // the compacted bytes' largest relative difference
	}{{backfill.Snapshot, 0}, {backfill.Merged, 0.01}} {
		scan := tc.scan
		t.Run(backfill.Scans[scan], func(t *testing.T) {
			var bytes [2][2]int64
			for i := range bytes {
				j, res := runCheckpointedJob(t, p, scan)
				bytes[i] = [2]int64{res.FS.Bytes[meterfs.Flush], res.FS.Bytes[meterfs.Compaction]}
				dbs := j.Store().Groups()
				if len(dbs) != 2 {
					t.Fatalf("%d compaction groups, want 2", len(dbs))
				}
				var count [2][2]int64 // per group: A's rows, B's
				for g := range dbs {
					snap := storage.OneGroup(dbs[g].NewSnapshot())
					for k, tb := range []storage.TableID{storage.TableUpstream, storage.TableMV} {
						var err error
						if count[g][k], err = verify.Count(snap, tb); err != nil {
							t.Fatal(err)
						}
					}
					snap.Close()
				}
				if count[0][0] == 0 || count[0][1] != 0 || count[1][0] != 0 || count[1][1] != count[0][0] {
					t.Errorf("rows of A and B: %v in the upstream's group, %v in the job's; want A only in the first, B (as many) only in the second", count[0], count[1])
				}
			}
			t.Logf("flushed %d and %d B, compacted %d and %d B", bytes[0][0], bytes[1][0], bytes[0][1], bytes[1][1])
			if bytes[0][1] == 0 {
				t.Error("nothing compacted: the job is too small to test compactions")
			}
			diff := math.Abs(float64(bytes[0][1]-bytes[1][1])) / float64(max(bytes[0][1], 1))
			if bytes[0][0] != bytes[1][0] || diff > tc.bound {
				t.Errorf("two runs differ: flushed %d vs %d B, compacted %d vs %d B", bytes[0][0], bytes[1][0], bytes[0][1], bytes[1][1])
			}
		})
	}
}

// TestOffloadedCompactionsGetPs: offloaded compactions get a P per concurrent
// compaction beside the job's, whether the profile sets the job's CPUs or not (the
// engine's compactor nodes take none of the job's), and cleanup gives them back.
func TestOffloadedCompactionsGetPs(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	for _, tc := range []struct {
		cpus, concurrency int
		offloaded         bool
		want              int
	}{
		{0, 4, true, before + 4},
		{1, 4, true, 5},
		{0, 4, false, before},
		{1, 0, true, 2},
	} {
		p := profile.Profile{Name: "p", Version: 1, FS: profile.FSMem, CPUs: tc.cpus, Checkpointed: true}
		p.LSM.CompactionConcurrency = tc.concurrency
		if tc.offloaded {
			p.Compaction = profile.CompactionOffloaded
		}
		cfg := Default()
		cleanup, err := cfg.UseProfile(p)
		if err != nil {
			t.Fatal(err)
		}
		got := runtime.GOMAXPROCS(0)
		cleanup()
		if got != tc.want {
			t.Errorf("cpus %d, %d compactions at once, offloaded %v: GOMAXPROCS %d, want %d", tc.cpus, tc.concurrency, tc.offloaded, got, tc.want)
		}
		if after := runtime.GOMAXPROCS(0); after != before {
			t.Errorf("cpus %d, offloaded %v: GOMAXPROCS %d after cleanup, want %d back", tc.cpus, tc.offloaded, after, before)
		}
	}
}

// builtinProfile returns the built-in profile named name.
func builtinProfile(t *testing.T, name string) profile.Profile {
	t.Helper()
	set, err := profile.NewSet(nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := set.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
