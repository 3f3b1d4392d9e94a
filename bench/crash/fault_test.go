package crash

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/backfill-bench/backfill-bench/bench/pipeline"
)

// TestSSTableWriteFault fails every sstable write from the third committed epoch on:
// the job stops with an error that says so (no panic, no hang), what was committed
// is consistent with the persisted progress, and once the fault clears a restart
// finishes with B == A.
func TestSSTableWriteFault(t *testing.T) {
	for i, c := range combos {
		t.Run(c.String(), func(t *testing.T) {
			t.Parallel()
			// Pebble treats a failed WAL write as fatal: fail sstables only.
			fault := &errorfs.Toggle{Injector: errorfs.ErrInjected.If(errorfs.And(errorfs.Writes, errorfs.PathMatch("/db/*.sst")))}
			cfg := SmallJob(20_000, c.scan, c.persist, uint64(60+i))
			cfg.FS = errorfs.Wrap(vfs.NewMem(), fault)
			cfg.MemTableSize = 256 << 10 // flushes during the job
			cfg.SnapshotRateLimit = 50_000
			commits := 0
			cfg.OnEvent = func(ev pipeline.Event) {
				if ev.Kind == pipeline.EventCommitted {
					if commits++; commits == 3 {
						fault.On()
					}
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			job, err := pipeline.Prepare(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = job.Run(ctx)
			if err == nil || !strings.Contains(err.Error(), "background flush or compaction failed") || !strings.Contains(err.Error(), "injected error") || ctx.Err() != nil {
				job.Close()
				t.Fatalf("run: err = %v, want the injected sstable write error, before the timeout", err)
			}
			t.Logf("the job stopped with: %v", err)
			fault.Off() // the disk is replaced
			if err := job.Close(); err != nil {
				t.Logf("close: %v", err)
			}
			cfg.OnEvent = nil
			job, err = pipeline.Recover(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer job.Close()
			if err := job.VerifyProgress(); err != nil {
				t.Fatal(err)
			}
			if _, err := job.Run(ctx); err != nil { // verifies B == A
				t.Fatal(fmt.Errorf("restart: %w", err))
			}
		})
	}
}
