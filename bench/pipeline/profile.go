package pipeline

import (
	"cmp"
	"fmt"
	"os"
	"runtime"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/backfill-bench/backfill-bench/bench/meterfs"
	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/bench/storage"
)

// UseProfile points a job's configuration at a fresh instance of the profile: a new
// filesystem (directory for disk), throttle, cache, memtable and GOMAXPROCS; the
// cleanup, to call once the job is closed, removes the directory, restores GOMAXPROCS.
func (cfg *Config) UseProfile(p profile.Profile) (cleanup func(), err error) {
	var dir string
	switch p.FS {
	case profile.FSMem:
		cfg.FS, cfg.Dir = vfs.NewMem(), "/db"
	case profile.FSDisk:
		fs, err := profile.Filesystem(p.JobDir())
		if err != nil {
			return nil, fmt.Errorf("profile %s: %w", p.Name, err)
		}
		if fs == "tmpfs" && !p.AllowTmpfs {
			return nil, fmt.Errorf("profile %s: %s is on tmpfs, which is memory, not a disk: set the profile's dir to a directory on a real disk, or allow_tmpfs: true", p.Name, p.JobDir())
		}
		dir, err = os.MkdirTemp(p.Dir, "backfill-bench-")
		if err != nil {
			return nil, fmt.Errorf("profile %s: job directory: %w", p.Name, err)
		}
		cfg.FS, cfg.Dir = vfs.Default, dir
	default:
		return nil, fmt.Errorf("profile %s: unknown fs %q", p.Name, p.FS)
	}
	cfg.CacheSize, cfg.MemTableSize = p.BlockCache, uint64(p.MemTable)
	cfg.Checkpointed, cfg.OffloadCompactions = p.Checkpointed, p.Compaction == profile.CompactionOffloaded
	cfg.SerialCompactions, cfg.CompactionGroups = p.Compaction == profile.CompactionSerial, p.CompactionGroups
	cfg.LSM = storage.LSMOptions{
		L0CompactionThreshold: p.LSM.L0CompactionThreshold, L0StopWritesThreshold: p.LSM.L0StopWritesThreshold,
		CompactionConcurrency: p.LSM.CompactionConcurrency, LBaseMaxBytes: p.LSM.LBaseMaxBytes, TargetFileSize: p.LSM.TargetFileSize,
		BlockSize: int(p.LSM.BlockSize), Compression: p.LSM.Compression,
	}
	cfg.Throttle = nil
	if p.Simulated() {
		tc := meterfs.ThrottleConfig{
			WriteBandwidth: p.WriteBandwidth, ReadBandwidth: p.ReadBandwidth, Bandwidth: p.Bandwidth, IOPS: p.IOPS,
			Sync: meterfs.Latency{Median: p.SyncLatency, P99: p.SyncLatencyP99, Seed: cfg.Seed},
		}
		if p.ObjectStore {
			tc.Upload = &meterfs.Upload{
				Latency:   meterfs.Latency{Median: p.PutLatency, P99: p.PutLatencyP99, Seed: cfg.Seed},
				Bandwidth: p.UploadBandwidth,
			}
		}
		cfg.Throttle = meterfs.NewThrottle(tc)
	}
	procs := runtime.GOMAXPROCS(0)
	cpus := cmp.Or(p.CPUs, procs)
	if cfg.OffloadCompactions {
		// A P per concurrent compaction, so that they do not take the job's (the
		// cores are still shared when the machine has fewer).
		cpus += max(p.LSM.CompactionConcurrency, 1)
	}
	if cpus != procs {
		runtime.GOMAXPROCS(cpus)
	}
	return func() {
		runtime.GOMAXPROCS(procs)
		if dir != "" {
			os.RemoveAll(dir)
		}
	}, nil
}
