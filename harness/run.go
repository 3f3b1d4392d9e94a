package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/bench"
	"github.com/backfill-bench/backfill-bench/bench/profile"
)

// RunConfig configures `benchrun run`.
type RunConfig struct {
	Matrix       bench.Matrix
	ProfileFiles []string
	Count        int           // rounds: every cell runs once per round
	Src          string        // a directory in the module checkout to build and attribute
	Out          string        // results directory; "": <module>/results/runs/<UTC time>-<commit>
	Timeout      time.Duration // per run (default 10m)
	DryRun       bool          // print the plan only
	NoPlots      bool          // skip drawing plots
	Shard        Shard         // run only this part of the matrix (zero: all)
	Binary       string        // a built bench binary to use instead of building one
	CommandLine  []string      // recorded in command.txt
	Stdout       io.Writer     // plan and summary
	Progress     io.Writer     // progress bar or log lines; nil: none
	Terminal     bool          // Progress is a terminal: draw a bar
	Logger       *slog.Logger
}

// QuickMatrix is the default suite: two workloads, persistence off and on, on the
// in-memory profile; six rounds of it take about a minute on two cores.
func QuickMatrix() bench.Matrix {
	return bench.Matrix{
		Profiles: []string{"mem"}, Workloads: []string{"narrow", "bid"}, Rows: []int64{300_000},
		Persist: []bool{false, true}, Scans: []string{"merged"},
		Barriers: []time.Duration{100 * time.Millisecond}, Pars: []int{2},
	}
}

// QuickCount is the default number of rounds: the fewest for which benchstat gives a
// 95 % confidence interval of a median.
const QuickCount = 6

// Run is one process of a bench binary: one job of one cell.
type Run struct {
	Index int // 1-based, in execution order
	Round int // 1-based
	Cell  bench.Cell
	Side  int // which build runs it: 0 in a plain run; 0 base, 1 head in a compare
}

// Plan orders count rounds, each running every cell once on each of the sides in
// turn, so that drift of the machine over time spreads over all cells and sides
// alike: A B A B …, not A A … B B ….
func Plan(cells []bench.Cell, count, sides int) []Run {
	var runs []Run
	for r := 1; r <= count; r++ {
		for _, c := range cells {
			for s := range sides {
				runs = append(runs, Run{Index: len(runs) + 1, Round: r, Cell: c, Side: s})
			}
		}
	}
	return runs
}

// Failure is a run that did not produce a verified result.
type Failure struct {
	Run    Run
	Side   string // "base" or "head" in a compare
	Reason string // "exit status 2", "timeout after 10m", "no result for the cell"
	Tail   string // the end of its output
}

// RunReport is what a run of the matrix left.
type RunReport struct {
	Dir      string
	Results  []*benchfmt.Result
	Units    benchfmt.UnitMetadataMap
	Failures []Failure
	Done     int // runs finished, failed or not
	Planned  int
}

// RunMatrix runs every cell Count times, interleaved, each job in its own process of
// the bench binary, and writes the results directory. Failed runs are recorded and
// the rest go on; the error at the end says how many failed. A cancelled ctx stops
// the current run and keeps everything finished.
func RunMatrix(ctx context.Context, cfg RunConfig) (*RunReport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	profiles, _ := profile.NewSet(cfg.ProfileFiles)
	cells := cfg.Matrix.Cells()
	if cfg.Shard.Count > 1 {
		cells = ShardCells(cells, profiles, cfg.Shard)
	}
	runs := Plan(cells, cfg.Count, 1)
	if cfg.DryRun {
		var used []profile.Profile
		for _, name := range cfg.Matrix.Profiles {
			p, _ := profiles.Get(name)
			used = append(used, p)
		}
		return nil, writePlan(cfg.Stdout, used, profiles, cells, runs, cfg.Shard)
	}
	if len(cells) == 0 {
		cfg.Logger.Info("this shard has no cells", "shard", fmt.Sprintf("%d/%d", cfg.Shard.Index, cfg.Shard.Count))
		return &RunReport{}, nil
	}

	src, err := InspectSource(ctx, cfg.Src)
	if err != nil {
		return nil, err
	}
	dir := cfg.Out
	if dir == "" {
		dir = filepath.Join(src.Dir, "results", "runs", time.Now().UTC().Format("20060102T150405Z")+"-"+src.Short())
	}
	x, err := newExecutor(dir, cfg.ProfileFiles, cfg.Timeout, cfg.CommandLine)
	if err != nil {
		return nil, err
	}
	s := &side{src: src, binary: cfg.Binary, file: "results.txt"}
	if s.binary == "" {
		s.binary = filepath.Join(x.dir, "bench.test")
		cfg.Logger.Info("building the bench binary", "src", src.Dir, "commit", src.Short())
		if err := BuildBench(ctx, src.Dir, s.binary); err != nil {
			return nil, err
		}
		defer os.Remove(s.binary)
	}
	prog := newProgress(cfg.Progress, cfg.Terminal, cfg.Logger, len(runs))
	err = x.execute(ctx, []*side{s}, runs, prog)
	rep := &RunReport{Dir: x.dir, Results: s.ordered(runs), Units: s.units, Failures: x.failures, Done: x.done, Planned: len(runs)}
	if err != nil {
		return rep, err
	}
	if len(rep.Results) > 0 {
		if err := writeSummary(cfg.Stdout, x.dir, rep); err != nil {
			return rep, err
		}
		if !cfg.NoPlots {
			drawPlots(cfg.Stdout, cfg.Logger, x.dir)
		}
	}
	return rep, x.err(ctx, len(runs))
}

// drawPlots draws the directory's plots and says where they are; a plot that
// cannot be drawn is a warning, not a failure of the run.
func drawPlots(w io.Writer, log *slog.Logger, dir string) []string {
	made, skipped, err := PlotDir(dir)
	if err != nil {
		log.Warn("no plots", "err", err)
		return nil
	}
	for _, s := range skipped {
		log.Warn("plot skipped", "why", s)
	}
	if len(made) > 0 {
		fmt.Fprintf(w, "plots: %s/{%s}.{png,svg}\n", filepath.Join(dir, "plots"), strings.Join(made, ","))
	}
	return made
}

// writeSummary prints the summary and keeps it as summary.txt.
func writeSummary(w io.Writer, dir string, rep *RunReport) error {
	var buf bytes.Buffer
	if err := WriteSummary(&buf, rep.Results, rep.Units); err != nil {
		return err
	}
	fmt.Fprintf(&buf, "\nresults: %s\n  go tool benchstat -col /persist %s\n", dir, filepath.Join(dir, "results.txt"))
	if err := WriteFileAtomic(filepath.Join(dir, "summary.txt"), buf.Bytes()); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// Validate checks the configuration without running anything: every error it
// returns is the user's to fix on the command line.
func (cfg RunConfig) Validate() error {
	if cfg.Count < 1 {
		return fmt.Errorf("--count %d: must be ≥ 1", cfg.Count)
	}
	if cfg.Timeout < 0 {
		return fmt.Errorf("--timeout %v: must be > 0", cfg.Timeout)
	}
	profiles, err := profile.NewSet(cfg.ProfileFiles)
	if err != nil {
		return fmt.Errorf("--profile-file: %w", err)
	}
	for _, name := range cfg.Matrix.Profiles {
		if _, err := profiles.Get(name); err != nil {
			return fmt.Errorf("--profile: %w", err)
		}
	}
	if len(cfg.Matrix.Cells()) == 0 {
		return errors.New("the matrix is empty: every dimension needs a value")
	}
	if cfg.Shard.Count > 0 && (cfg.Shard.Index < 1 || cfg.Shard.Index > cfg.Shard.Count) {
		return fmt.Errorf("--shard %d/%d: want 1 ≤ i ≤ n", cfg.Shard.Index, cfg.Shard.Count)
	}
	return nil
}
