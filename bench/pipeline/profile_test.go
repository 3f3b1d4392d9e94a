package pipeline

import (
	"os"
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
