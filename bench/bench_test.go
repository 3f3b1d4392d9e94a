package bench_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/bench"
	"github.com/backfill-bench/backfill-bench/bench/pipeline"
	"github.com/backfill-bench/backfill-bench/workloads"
)

var (
	rowsFlag     = flag.Int64("rows", 200_000, "initial rows of the upstream table per job")
	workloadFlag = flag.String("workloads", "narrow", "comma-separated workload specs (see `benchrun workloads`)")
	barriersFlag = flag.String("barriers", "100ms,1s", "comma-separated barrier intervals")
	parFlag      = flag.String("par", "2", "comma-separated actor counts")
)

func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		// Unit lines first, so benchstat knows each metric's direction.
		if err := bench.WriteUnits(os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}

func parseList[T any](b *testing.B, name, list string, parse func(string) (T, error)) []T {
	var out []T
	for _, s := range strings.Split(list, ",") {
		v, err := parse(strings.TrimSpace(s))
		if err != nil {
			b.Fatalf("-%s %q: %v", name, list, err)
		}
		out = append(out, v)
	}
	return out
}

func atoi(s string) (int, error) {
	var n int
	_, err := fmt.Sscan(s, &n)
	return n, err
}

// BenchmarkBackfill runs one backfill job per op on the in-memory profile, persist off
// and on, and reports what DESIGN §3 lists. The job verifies B == A before anything is
// reported; a mismatch fails the benchmark.
func BenchmarkBackfill(b *testing.B) {
	barriers := parseList(b, "barriers", *barriersFlag, time.ParseDuration)
	pars := parseList(b, "par", *parFlag, atoi)
	specs := parseList(b, "workloads", *workloadFlag, func(s string) (string, error) {
		sp, err := workloads.ParseSpec(s)
		return sp.String(), err
	})
	for _, wl := range specs {
		for _, barrier := range barriers {
			for _, par := range pars {
				for _, persist := range []bool{false, true} {
					cell := bench.Cell{Profile: "mem", Workload: wl, Rows: *rowsFlag, Persist: persist, Scan: "merged", Barrier: barrier, Par: par}
					b.Run(cell.Name(), func(b *testing.B) {
						cfg := pipeline.Default()
						cfg.Workload, cfg.Rows, cfg.Persist, cfg.BarrierInterval, cfg.Par = cell.Workload, cell.Rows, cell.Persist, cell.Barrier, cell.Par
						runJobs(b, cfg, (*pipeline.Job).Run)
					})
				}
			}
		}
	}
}

// BenchmarkRawCopy is the physical limit on the same profile: scan A and batch-write
// its rows to another table, with no stream logic.
func BenchmarkRawCopy(b *testing.B) {
	for _, wl := range strings.Split(*workloadFlag, ",") {
		b.Run(fmt.Sprintf("profile=mem/workload=%s/rows=%d", wl, *rowsFlag), func(b *testing.B) {
			cfg := pipeline.Default()
			cfg.Workload, cfg.Rows = wl, *rowsFlag
			runJobs(b, cfg, (*pipeline.Job).RawCopy)
		})
	}
}

func runJobs(b *testing.B, cfg pipeline.Config, run func(*pipeline.Job, context.Context) (*pipeline.Result, error)) {
	b.ReportAllocs()
	ctx := context.Background()
	var metrics [][]bench.Metric
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		job, err := pipeline.Prepare(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := run(job, ctx)
		b.StopTimer()
		job.Close()
		if err != nil {
			b.Fatal(err)
		}
		metrics = append(metrics, bench.Metrics(res))
	}
	// Mean over ops; with -benchtime 1x (the harness's mode) that is the one job.
	for i, m := range metrics[0] {
		sum := 0.0
		for _, ms := range metrics {
			sum += ms[i].Value
		}
		b.ReportMetric(sum/float64(len(metrics)), m.Unit)
	}
}
