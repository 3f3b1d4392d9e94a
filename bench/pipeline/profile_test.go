package pipeline

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/meterfs"
	"github.com/backfill-bench/backfill-bench/bench/profile"
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
	set, err := profile.NewSet(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"hummock", "engine"} {
		t.Run(name, func(t *testing.T) {
			p, err := set.Get(name)
			if err != nil {
				t.Fatal(err)
			}
			cfg := Default()
			cleanup, err := cfg.UseProfile(p)
			if err != nil {
				t.Fatal(err)
			}
			defer cleanup()
			cfg.Rows, cfg.Vnodes, cfg.Persist, cfg.BarrierRows, cfg.ChangesPerEpoch, cfg.SettleWait = 12_000, 16, true, 200, 2, 100*time.Millisecond
			j, err := Prepare(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			res, err := j.Run(t.Context())
			if err != nil {
				t.Fatal(err)
			}
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
