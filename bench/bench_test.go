package bench_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/bench"
	"github.com/backfill-bench/backfill-bench/bench/backfill"
	"github.com/backfill-bench/backfill-bench/bench/baseline"
	"github.com/backfill-bench/backfill-bench/bench/crash"
	"github.com/backfill-bench/backfill-bench/bench/pipeline"
	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/gate"
	"github.com/backfill-bench/backfill-bench/contract/jobtrace"
	"github.com/backfill-bench/backfill-bench/contract/rates"
	"github.com/backfill-bench/backfill-bench/internal/callgrind"
	"github.com/backfill-bench/backfill-bench/workloads"
)

// The bench binary's flags, declared by the contract the harness runs it by.
var flags = contract.Register(flag.CommandLine, contract.Matrix{
	Profiles: []string{"mem"}, Workloads: []string{"narrow"}, Rows: []int64{1_000_000},
	Persist: []bool{false, true}, Scans: []string{"snapshot"},
	Barriers: []rates.Cadence{rates.Every(100 * time.Millisecond), rates.Every(time.Second)}, Pars: []int{2},
})

func TestMain(m *testing.M) {
	if err := keepFreedMemory(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	flag.Parse()
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		// Unit lines first, so benchstat knows each metric's direction.
		if err := contract.WriteUnits(os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}

// matrix reads the matrix flags and the profiles they name.
func matrix(b *testing.B) (contract.Matrix, *profile.Set) {
	m, err := flags.Matrix()
	if err == nil {
		err = m.Canonicalize(workloads.Canonical)
	}
	if err != nil {
		b.Fatal(err)
	}
	profiles, err := profile.NewSet(flags.ProfileFileList())
	if err != nil {
		b.Fatalf("-%s: %v", contract.FlagProfileFile, err)
	}
	for _, name := range m.Profiles {
		if _, err := profiles.Get(name); err != nil {
			b.Fatalf("-profile: %v", err)
		}
	}
	return m, profiles
}

// jobConfig is the pipeline configuration of a cell.
func jobConfig(c contract.Cell) (pipeline.Config, error) {
	cfg := pipeline.Default()
	cfg.Workload, cfg.Rows, cfg.Persist, cfg.Par = c.Workload, c.Rows, c.Persist, c.Par
	if c.Barrier.WorkDriven() {
		cfg.BarrierRows = c.Barrier.Rows
	} else {
		cfg.BarrierInterval = c.Barrier.Interval
	}
	cfg.ChangesPerSecond, cfg.ChangesPerEpoch = 0, c.Changes.ChangesPerEpoch(c.Barrier)
	cfg.SnapshotRateLimit = rate(c.Limit.Rate)
	if st := c.Limit.Step; st != (rates.RateStep{}) {
		cfg.SnapshotRateStep = pipeline.RateStep{After: st.After, Rate: rate(st.Rate)}
		if st.Percent > 0 {
			cfg.SnapshotRateStep.AtRows = max(c.Rows*int64(st.Percent)/100, 1)
		}
	}
	cfg.ChunkSize = c.ChunkSize()
	cfg.CheckpointFrequency = c.Checkpoint()
	cfg.Vnodes = c.VnodeCount()
	var err error
	if cfg.Scan, err = backfill.ParseScan(c.Scan); err != nil {
		return cfg, err
	}
	cfg.Read, err = backfill.ParseRead(c.ReadMode())
	return cfg, err
}

// rate is a contract rate as the executor takes it.
func rate(r int64) float64 {
	if r == rates.Pause {
		return backfill.Paused
	}
	return float64(r)
}

// BenchmarkBackfill runs one backfill job per op for every cell of the matrix flags
// and reports the metrics of bench.Metrics. The job verifies B == A before anything is
// reported; a mismatch fails the benchmark.
func BenchmarkBackfill(b *testing.B) {
	m, profiles := matrix(b)
	for _, cell := range m.Cells() {
		p, _ := profiles.Get(cell.Profile)
		b.Run(cell.Name(), func(b *testing.B) {
			cfg, err := jobConfig(cell)
			if err != nil {
				b.Fatal(err)
			}
			warmUp(b, p, cfg, (*pipeline.Job).Run)
			runJobs(b, p, cfg, (*pipeline.Job).Run, func(r *pipeline.Result) error {
				if *flags.Trace == "" {
					return nil
				}
				return jobtrace.AppendTrace(*flags.Trace, bench.NewTrace(cell, r))
			})
		})
	}
}

// BenchmarkRawCopy is the append-order copy, the storage's limit on the same
// profile: scan A and batch-write its rows to another table in key order, with no
// stream logic.
func BenchmarkRawCopy(b *testing.B) {
	m, profiles := matrix(b)
	for _, pname := range m.Profiles {
		p, _ := profiles.Get(pname)
		for _, wl := range m.Workloads {
			for _, rows := range m.Rows {
				b.Run(fmt.Sprintf("profile=%s/workload=%s/rows=%d", pname, wl, rows), func(b *testing.B) {
					cfg := pipeline.Default()
					cfg.Workload, cfg.Rows = wl, rows
					rawCopy := func(j *pipeline.Job, ctx context.Context) (*pipeline.Result, error) { return baseline.RawCopy(ctx, j) }
					warmUp(b, p, cfg, rawCopy)
					runJobs(b, p, cfg, rawCopy, nil)
				})
			}
		}
	}
}

// BenchmarkReplay is the executor-free baseline of every cell: a backfill of the
// cell records its epoch batches (untimed), then each op commits them again, with
// the same syncs, on a fresh DB with A loaded (timed) and verifies B == A.
// Backfill ÷ replay is the executor's own overhead and the compaction work its
// slower pace adds; after each op (untimed) the batches are replayed once more at
// the backfill's pace, which the result reports as paced-* units
// (baseline.PacedReplay).
func BenchmarkReplay(b *testing.B) {
	m, profiles := matrix(b)
	for _, cell := range m.Cells() {
		p, _ := profiles.Get(cell.Profile)
		b.Run(cell.ReplayName(), func(b *testing.B) {
			cfg, err := jobConfig(cell)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			log, err := recordEpochs(p, cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer log.Close()
			// The recording is the replay's warm-up (-warmup): the replay meets a
			// process that has run a job, as the warmed-up backfill does. Without
			// -warmup the backfill is its process's first job: give back the
			// memory the recording grew, so that the replay too starts from a heap
			// only a load has grown.
			if !*flags.Warmup {
				debug.FreeOSMemory()
			}
			// After each replay, untimed, the replay at the recorded backfill's
			// pace: its figures go on the replay's result (bench.PacedMetrics).
			var paced []bench.Metric // summed over ops
			runJobs(b, p, cfg, func(j *pipeline.Job, ctx context.Context) (*pipeline.Result, error) {
				return baseline.Replay(ctx, j, log)
			}, func(*pipeline.Result) error {
				res, err := pacedReplay(p, cfg, log)
				if err != nil {
					return err
				}
				for i, m := range bench.PacedMetrics(res) {
					if i == len(paced) {
						paced = append(paced, bench.Metric{Unit: m.Unit})
					}
					paced[i].Value += m.Value
				}
				return nil
			})
			for _, m := range paced {
				b.ReportMetric(m.Value/float64(b.N), m.Unit)
			}
		})
	}
}

// pacedReplay replays log at the pace it was recorded at (baseline.PacedReplay) on
// a fresh instance of the profile, from a heap as the replay's: after the replay
// with -warmup, freed without.
func pacedReplay(p profile.Profile, cfg pipeline.Config, log *baseline.EpochLog) (*pipeline.Result, error) {
	if !*flags.Warmup {
		debug.FreeOSMemory()
	}
	res, err := untimedJob(p, cfg, func(j *pipeline.Job, ctx context.Context) (*pipeline.Result, error) {
		return baseline.PacedReplay(ctx, j, log)
	})
	if err != nil {
		return nil, fmt.Errorf("the replay at the backfill's pace: %w", err)
	}
	return res, nil
}

// recordEpochs runs (untimed) a backfill of cfg on a fresh instance of the profile
// and returns the epoch batches it committed. With barriers cut by work they are
// exactly the measured cell's; with barriers cut by time, one run's.
func recordEpochs(p profile.Profile, cfg pipeline.Config) (*baseline.EpochLog, error) {
	log, err := baseline.NewEpochLog("")
	if err != nil {
		return nil, err
	}
	cfg.RecordEpochs = log
	if _, err := untimedJob(p, cfg, (*pipeline.Job).Run); err != nil {
		log.Close()
		return nil, fmt.Errorf("recording the backfill to replay: %w", err)
	}
	return log, nil
}

// untimedJob runs one job of cfg on a fresh instance of the profile, outside the
// benchmark's timer.
func untimedJob(p profile.Profile, cfg pipeline.Config, run func(*pipeline.Job, context.Context) (*pipeline.Result, error)) (*pipeline.Result, error) {
	cleanup, err := cfg.UseProfile(p)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	job, err := pipeline.Prepare(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	defer job.Close()
	return run(job, context.Background())
}

// BenchmarkScanOnly is the read-side baseline: the actors of a cell read A as its
// scan does and write nothing; one per distinct scan configuration of the cells.
func BenchmarkScanOnly(b *testing.B) {
	m, profiles := matrix(b)
	seen := map[string]bool{}
	for _, cell := range m.Cells() {
		if seen[cell.ScanOnlyName()] {
			continue
		}
		seen[cell.ScanOnlyName()] = true
		p, _ := profiles.Get(cell.Profile)
		b.Run(cell.ScanOnlyName(), func(b *testing.B) {
			cfg, err := jobConfig(cell)
			if err != nil {
				b.Fatal(err)
			}
			scanOnly := func(j *pipeline.Job, ctx context.Context) (*pipeline.Result, error) { return baseline.ScanOnly(ctx, j) }
			warmUp(b, p, cfg, scanOnly)
			runJobs(b, p, cfg, scanOnly, nil)
		})
	}
}

// BenchmarkRecovery runs one job per op that loses power (a crash clone keeping
// only synced data) once the given fraction of its snapshot rows were emitted, then
// reopens it and runs it to a verified finish (B == A). sec/op is the total from
// start to finish without the harness's checks; it also reports the snapshot rows
// emitted again after the crash (those the persisted progress did not keep) and
// the recovery time (reopen → the scan emits again). The
// power loss needs the crashable in-memory filesystem, so a profile on a real disk
// is skipped; the other knobs of the profile (cache, memtable, throttle, CPUs) apply.
func BenchmarkRecovery(b *testing.B) {
	m, profiles := matrix(b)
	var fractions []float64
	for _, f := range strings.Split(*flags.Crash, ",") {
		pct, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(f), "%"), 64)
		if err != nil || pct <= 0 || pct >= 100 {
			b.Fatalf("-%s %q: want percentages in (0, 100), like 25%%,90%%", contract.FlagCrash, f)
		}
		fractions = append(fractions, pct)
	}
	for _, c := range m.Cells() {
		p, _ := profiles.Get(c.Profile)
		for _, pct := range fractions {
			b.Run(c.RecoveryName(fmt.Sprintf("%g%%", pct)), func(b *testing.B) {
				if p.FS != profile.FSMem {
					b.Skipf("profile %s writes to a real disk; a power loss needs the in-memory crashable filesystem", p.Name)
				}
				if c.Scan == backfill.Snapshot.String() {
					b.Skipf("scan=snapshot: recovery of a snapshot backfill is not modelled yet; use -scan merged or per-vnode")
				}
				job, err := jobConfig(c)
				if err != nil {
					b.Fatal(err)
				}
				cleanup, err := job.UseProfile(p)
				if err != nil {
					b.Fatal(err)
				}
				defer cleanup()
				at := int64(float64(c.Rows) * pct / 100)
				var total, recovery time.Duration
				var reemitted int64
				for range b.N {
					rep, err := crash.Run(context.Background(), crash.Config{Job: job,
						Points: []crash.Point{{Kind: pipeline.EventSnapshotChunk, AtRows: at}}})
					if err != nil {
						b.Fatal(err)
					}
					if len(rep.Crashes) == 0 {
						b.Fatalf("the job finished before %d snapshot rows", at)
					}
					total += rep.Total()
					recovery += rep.Result.Recovery
					reemitted += rep.Reemitted
				}
				n := float64(b.N)
				b.ReportMetric(float64(total.Nanoseconds())/n, contract.UnitNsPerOp)
				b.ReportMetric(recovery.Seconds()/n, contract.UnitRecoverySec)
				b.ReportMetric(float64(reemitted)/n, contract.UnitReemittedRows)
			})
		}
	}
}

// warmUp runs, with -warmup, one untimed job of the benchmark on a fresh instance
// of the profile and drops its result, so that the timed jobs after it meet a
// process that has run one, as a resident engine's has: cold, a quarter-second job
// takes about 1.45 times as long (README "Baselines"). Under callgrind it runs nothing:
// the counts do not depend on it, and its window would add to the timed job's.
func warmUp(b *testing.B, p profile.Profile, cfg pipeline.Config, run func(*pipeline.Job, context.Context) (*pipeline.Result, error)) {
	if !*flags.Warmup || callgrind.Running() {
		return
	}
	b.StopTimer()
	if _, err := untimedJob(p, cfg, run); err != nil {
		b.Fatalf("the warm-up job (-%s): %v", contract.FlagWarmup, err)
	}
}

// runJobs runs b.N jobs on fresh instances of the profile and reports the mean of
// their metrics (those every job reported); each result goes to done (if not nil)
// first. A job too short for steady-state figures is said so in the log.
func runJobs(b *testing.B, p profile.Profile, cfg pipeline.Config, run func(*pipeline.Job, context.Context) (*pipeline.Result, error), done func(*pipeline.Result) error) {
	ctx := context.Background()
	sums := map[string]float64{}
	counts := map[string]int{}
	var order []string
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cleanup, err := cfg.UseProfile(p)
		if err != nil {
			b.Fatal(err)
		}
		res, err := runJob(b, ctx, cfg, run)
		cleanup()
		if err != nil {
			b.Fatal(err)
		}
		if done != nil {
			if err := done(res); err != nil {
				b.Fatal(err)
			}
		}
		metrics, steady := bench.Metrics(res)
		if !steady && len(res.Epochs) > 0 { // a raw copy has no epochs to be steady in
			b.Logf("too short for steady-state figures: %d regular barriers, fewer than %d; lengthen the job (more rows, a shorter barrier, a snapshot rate limit)",
				len(res.Regular()), contract.MinSteadyBarriers)
		}
		for _, m := range metrics {
			if counts[m.Unit] == 0 {
				order = append(order, m.Unit)
			}
			sums[m.Unit] += m.Value
			counts[m.Unit]++
		}
	}
	// Mean over ops; with -benchtime 1x (the harness's mode) that is the one job.
	for _, u := range order {
		if counts[u] == b.N {
			b.ReportMetric(sums[u]/float64(b.N), u)
		}
	}
}

// runJob prepares, runs and closes one job, timing only the run.
func runJob(b *testing.B, ctx context.Context, cfg pipeline.Config, run func(*pipeline.Job, context.Context) (*pipeline.Result, error)) (*pipeline.Result, error) {
	job, err := pipeline.Prepare(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer job.Close()
	if *flags.StartGate {
		if err := gate.AwaitStart(); err != nil {
			return nil, fmt.Errorf("-%s: %w", contract.FlagStartGate, err)
		}
	}
	b.StartTimer()
	defer b.StopTimer()
	return run(job, ctx)
}
