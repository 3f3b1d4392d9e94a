package pipeline

import (
	"fmt"
	"os"
	"runtime"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/backfill-bench/backfill-bench/bench/meterfs"
	"github.com/backfill-bench/backfill-bench/bench/profile"
)

// UseProfile points a job's configuration at a fresh instance of the profile: a new
// filesystem (a new directory for disk), a new throttle, its cache and memtable, and
// its GOMAXPROCS. The returned cleanup removes the directory and restores GOMAXPROCS;
// call it after the job is closed.
func (cfg *Config) UseProfile(p profile.Profile) (cleanup func(), err error) {
	var dir string
	switch p.FS {
	case profile.FSMem:
		cfg.FS, cfg.Dir = vfs.NewMem(), "/db"
	case profile.FSDisk:
		dir, err = os.MkdirTemp(p.Dir, "backfill-bench-")
		if err != nil {
			return nil, fmt.Errorf("profile %s: job directory: %w", p.Name, err)
		}
		cfg.FS, cfg.Dir = vfs.Default, dir
	default:
		return nil, fmt.Errorf("profile %s: unknown fs %q", p.Name, p.FS)
	}
	cfg.CacheSize, cfg.MemTableSize = p.BlockCache, uint64(p.MemTable)
	cfg.Throttle = nil
	if p.Simulated() {
		cfg.Throttle = meterfs.NewThrottle(p.WriteBandwidth, 0, p.SyncLatency, nil)
	}
	procs := runtime.GOMAXPROCS(0)
	if p.CPUs > 0 {
		runtime.GOMAXPROCS(p.CPUs)
	}
	return func() {
		runtime.GOMAXPROCS(procs)
		if dir != "" {
			os.RemoveAll(dir)
		}
	}, nil
}
