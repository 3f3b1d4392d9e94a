package bench_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/backfill"
	"github.com/backfill-bench/backfill-bench/bench/pipeline"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/rates"
)

// TestCellOptionsRun: cells of the chunk and limit dimensions turn into the job
// they name (the engine's 256-row chunks by default, 1024 when named; a limit
// stepped mid-job), run to a verified B == A, and their names parse back to them.
func TestCellOptionsRun(t *testing.T) {
	base := contract.Cell{Profile: "mem", Workload: "narrow", Rows: 3000, Persist: true, Scan: "merged", Barrier: rates.Every(20 * time.Millisecond), Par: 2, Vnodes: 16}
	stepped := rates.RateLimit{Rate: 20_000, Step: rates.RateStep{Rate: 0, Percent: 50}}
	paused := rates.RateLimit{Rate: rates.Pause, Step: rates.RateStep{Rate: 50_000, After: 50 * time.Millisecond}}
	for _, tc := range []struct {
		name   string
		cell   func(contract.Cell) contract.Cell
		chunk  int
		limit  float64
		step   pipeline.RateStep
		inName string
	}{
		{"default chunk", func(c contract.Cell) contract.Cell { return c }, 256, 0, pipeline.RateStep{}, ""},
		{"chunk=1024", func(c contract.Cell) contract.Cell { c.Chunk = 1024; return c }, 1024, 0, pipeline.RateStep{}, "/chunk=1024/"},
		{"limit stepped at 50%", func(c contract.Cell) contract.Cell { c.Limit = stepped; return c }, 256, 20_000, pipeline.RateStep{AtRows: 1500}, "/limit=20k-per-s..none@50%/"},
		{"paused, then a rate", func(c contract.Cell) contract.Cell { c.Limit = paused; return c }, 256, backfill.Paused, pipeline.RateStep{After: 50 * time.Millisecond, Rate: 50_000}, "/limit=0-per-s..50k-per-s@50ms/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cell(base)
			back, err := contract.ParseName(c.Name())
			if err != nil {
				t.Fatal(err)
			}
			if back.Name() != c.Name() || back.ChunkSize() != tc.chunk || back.Limit != c.Limit {
				t.Errorf("%s parses back as %+v", c.Name(), back)
			}
			if tc.inName != "" && !strings.Contains(c.Name(), tc.inName) || tc.inName == "" && (strings.Contains(c.Name(), "chunk=") || strings.Contains(c.Name(), "limit=")) {
				t.Errorf("name %s, want %q in it", c.Name(), tc.inName)
			}
			cfg, err := jobConfig(c)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.ChunkSize != tc.chunk || cfg.SnapshotRateLimit != tc.limit || cfg.SnapshotRateStep != tc.step {
				t.Errorf("job: chunk %d, limit %v, step %+v; want %d, %v, %+v", cfg.ChunkSize, cfg.SnapshotRateLimit, cfg.SnapshotRateStep, tc.chunk, tc.limit, tc.step)
			}
			cfg.SettleWait = 50 * time.Millisecond
			job, err := pipeline.Prepare(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer job.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := job.Run(ctx) // verifies B == A and the state
			if err != nil {
				t.Fatal(err)
			}
			if res.MVRows < c.Rows {
				t.Errorf("B has %d rows, A started with %d", res.MVRows, c.Rows)
			}
		})
	}
}
