package pipeline

import (
	"os"
	"strings"
	"testing"
	"time"

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
