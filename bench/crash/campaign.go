package crash

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/backfill"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/scankind"
)

// CampaignConfig configures Campaign: how many random power losses, on which jobs.
type CampaignConfig struct {
	Points   int    // random crash scenarios per combination
	Seed     uint64 // scenario i of a combination uses seed Seed+i
	Persist  []bool
	Scans    []string
	Rows     int64 // rows of each job's table
	Parallel int   // scenarios run at once (0: GOMAXPROCS)
	Stdout   io.Writer
	Logger   *slog.Logger // one line per inconsistent scenario (nil: discard)

	scenario func(context.Context, Config) (*Report, error) // nil: Run
}

// ErrInconsistent is returned by Campaign when a scenario did not recover to B == A.
var ErrInconsistent = errors.New("crash test: inconsistent recoveries")

// Campaign runs cfg.Points random power-loss scenarios (Random) for every
// persist mode and scan, prints one line per combination, and names the command
// that reproduces each inconsistent scenario.
func Campaign(ctx context.Context, cfg CampaignConfig) error {
	if cfg.Points < 1 {
		return fmt.Errorf("--points %d: want at least 1", cfg.Points)
	}
	if cfg.Rows < 1 {
		return fmt.Errorf("--rows %d: want at least 1", cfg.Rows)
	}
	if len(cfg.Persist) == 0 || len(cfg.Scans) == 0 {
		return errors.New("crash test: no persist mode or scan to test")
	}
	if cfg.Parallel < 1 {
		cfg.Parallel = runtime.GOMAXPROCS(0)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.scenario == nil {
		cfg.scenario = Run
	}
	var bad []string
	for _, name := range cfg.Scans {
		scan, err := backfill.ParseScan(name)
		if err != nil {
			return fmt.Errorf("--scan: %w", err)
		}
		if !scan.Kind().Recovers {
			return fmt.Errorf("--scan %s: recovery of a %s is not modelled yet (pipeline.Recover refuses it); run the campaign with --scan %s", name, scan.Kind().Engine, strings.Join(scankind.Recoverable(), ","))
		}
		for _, persist := range cfg.Persist {
			start := time.Now()
			res := crashCombination(ctx, cfg, scan, persist)
			if err := ctx.Err(); err != nil {
				return err
			}
			fmt.Fprintf(cfg.Stdout, "scan=%s persist=%s points=%d consistent=%d inconsistent=%d crashes=%d (%s); crashed: %s\n",
				scan, contract.OnOff(persist), cfg.Points, cfg.Points-len(res.failed), len(res.failed), res.crashes, time.Since(start).Round(time.Millisecond), res.crashedBy())
			for _, f := range res.failed {
				repro := fmt.Sprintf("benchrun crashtest --points 1 --seed %d --rows %d --scan %s --persist %s", f.seed, cfg.Rows, scan, contract.OnOff(persist))
				cfg.Logger.Error("inconsistent recovery", "seed", f.seed, "err", f.err, "reproduce", repro)
				bad = append(bad, repro)
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %d; reproduce with:\n  %s", ErrInconsistent, len(bad), strings.Join(bad, "\n  "))
	}
	return nil
}

type crashFailure struct {
	seed uint64
	err  error
}

type crashResults struct {
	failed  []crashFailure
	crashes int // power losses over all scenarios (some end before their point)
	// Scenarios that crashed, by read mode, by checkpoint frequency, and on an
	// object store: which of the dimensions Random draws the crashes covered.
	byRead      map[backfill.Read]int
	byCkpt      map[int]int
	objectStore int
}

// crashedBy says how the scenarios that crashed spread over the drawn dimensions.
func (r crashResults) crashedBy() string {
	var reads, ckpts []string
	for _, rd := range []backfill.Read{backfill.Uncommitted, backfill.Checkpoint} {
		reads = append(reads, fmt.Sprintf("%d %s", r.byRead[rd], rd))
	}
	for _, n := range slices.Sorted(maps.Keys(r.byCkpt)) {
		ckpts = append(ckpts, fmt.Sprintf("%d at ckpt=%d", r.byCkpt[n], n))
	}
	return fmt.Sprintf("%s; %s; %d on an object store", strings.Join(reads, ", "), strings.Join(ckpts, ", "), r.objectStore)
}

// crashCombination runs the scenarios of one scan and persist mode, Parallel at once.
func crashCombination(ctx context.Context, cfg CampaignConfig, scan backfill.Scan, persist bool) crashResults {
	var (
		mu  sync.Mutex
		out = crashResults{byRead: map[backfill.Read]int{}, byCkpt: map[int]int{}}
		wg  sync.WaitGroup
	)
	seeds := make(chan uint64)
	for range cfg.Parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range seeds {
				sc := Random(seed, cfg.Rows, scan, persist)
				rep, err := cfg.scenario(ctx, sc)
				if ctx.Err() != nil {
					continue
				}
				mu.Lock()
				if rep != nil && len(rep.Crashes) > 0 {
					out.crashes += len(rep.Crashes)
					out.byRead[sc.Job.Read]++
					out.byCkpt[sc.Job.CheckpointFrequency]++
					if sc.Job.Throttle.ObjectStore() {
						out.objectStore++
					}
				}
				if err != nil {
					out.failed = append(out.failed, crashFailure{seed, err})
				}
				mu.Unlock()
			}
		}()
	}
	for i := range cfg.Points {
		select {
		case seeds <- cfg.Seed + uint64(i):
		case <-ctx.Done():
		}
	}
	close(seeds)
	wg.Wait()
	slices.SortFunc(out.failed, func(a, b crashFailure) int { return cmp.Compare(a.seed, b.seed) })
	return out
}
