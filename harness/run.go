package harness

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
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

// Run is one process of the bench binary: one job of one cell.
type Run struct {
	Index int // 1-based, in execution order
	Round int // 1-based
	Cell  bench.Cell
}

// Plan orders count rounds of the cells, each round running every cell once, so
// that drift of the machine over time spreads over all cells alike.
func Plan(cells []bench.Cell, count int) []Run {
	var runs []Run
	for r := 1; r <= count; r++ {
		for _, c := range cells {
			runs = append(runs, Run{Index: len(runs) + 1, Round: r, Cell: c})
		}
	}
	return runs
}

// Failure is a run that did not produce a verified result.
type Failure struct {
	Run    Run
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
	runs := Plan(cells, cfg.Count)
	if cfg.DryRun {
		var used []profile.Profile
		for _, name := range cfg.Matrix.Profiles {
			p, _ := profiles.Get(name)
			used = append(used, p)
		}
		return nil, writePlan(cfg.Stdout, used, cells, runs)
	}

	src, err := InspectSource(ctx, cfg.Src)
	if err != nil {
		return nil, err
	}
	machine := InspectMachine()
	dir := cfg.Out
	if dir == "" {
		dir = filepath.Join(src.Dir, "results", "runs", time.Now().UTC().Format("20060102T150405Z")+"-"+src.Short())
	}
	if err := os.MkdirAll(filepath.Join(dir, "traces"), 0o755); err != nil {
		return nil, fmt.Errorf("results directory: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, "command.txt"), []byte(quoteArgs(cfg.CommandLine)+"\n")); err != nil {
		return nil, err
	}
	binary := cfg.Binary
	if binary == "" {
		binary = filepath.Join(dir, "bench.test")
		cfg.Logger.Info("building the bench binary", "src", src.Dir, "commit", src.Short())
		if err := BuildBench(ctx, src.Dir, binary); err != nil {
			return nil, err
		}
		defer os.Remove(binary)
	}
	var absFiles []string
	for _, f := range cfg.ProfileFiles {
		a, err := filepath.Abs(f)
		if err != nil {
			return nil, err
		}
		absFiles = append(absFiles, a)
	}

	rep := &RunReport{Dir: dir, Units: benchfmt.UnitMetadataMap{}, Planned: len(runs)}
	results := map[int][]*benchfmt.Result{} // by run index
	prog := newProgress(cfg.Progress, cfg.Terminal, cfg.Logger, len(runs))
	for _, run := range runs {
		if ctx.Err() != nil {
			break
		}
		p, _ := profiles.Get(run.Cell.Profile)
		prog.start(run)
		out := runOne(ctx, cfg, binary, absFiles, dir, p, run)
		if ctx.Err() != nil && out.failure != nil {
			break // interrupted: neither a result nor a failure
		}
		rep.Done++
		if out.failure != nil {
			rep.Failures = append(rep.Failures, *out.failure)
			if err := writeFailures(dir, rep.Failures); err != nil {
				return rep, err
			}
		} else {
			for _, r := range out.results {
				addConfig(r, src, machine, p)
			}
			results[run.Index] = out.results
			for k, u := range out.units {
				rep.Units[k] = u
			}
		}
		prog.done(run, out.failure)
		rep.Results = orderResults(runs, results)
		if err := writeResults(dir, rep.Results, rep.Units); err != nil {
			return rep, err
		}
	}
	prog.finish()
	if len(rep.Results) > 0 {
		if err := writeSummary(cfg.Stdout, dir, rep); err != nil {
			return rep, err
		}
	}
	if ctx.Err() != nil {
		return rep, fmt.Errorf("interrupted after %d of %d runs; the finished ones are in %s", rep.Done, len(runs), dir)
	}
	if len(rep.Failures) > 0 {
		return rep, fmt.Errorf("%d of %d runs failed (see %s)", len(rep.Failures), len(runs), filepath.Join(dir, "failures.txt"))
	}
	return rep, nil
}

// writeSummary prints the summary and keeps it as summary.txt.
func writeSummary(w io.Writer, dir string, rep *RunReport) error {
	var buf bytes.Buffer
	if err := WriteSummary(&buf, rep.Results, rep.Units); err != nil {
		return err
	}
	fmt.Fprintf(&buf, "\nresults: %s\n  go tool benchstat -col /persist %s\n", dir, filepath.Join(dir, "results.txt"))
	if err := writeFileAtomic(filepath.Join(dir, "summary.txt"), buf.Bytes()); err != nil {
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
	return nil
}

// BuildBench compiles the bench package's test binary of the checkout at dir.
func BuildBench(ctx context.Context, dir, out string) error {
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", out, "./bench/")
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the bench binary in %s: %v\n%s", dir, err, msg)
	}
	return nil
}

type outcome struct {
	results []*benchfmt.Result
	units   benchfmt.UnitMetadataMap
	failure *Failure
}

// runOne runs one job of the cell in its own process of the bench binary.
func runOne(ctx context.Context, cfg RunConfig, binary string, profileFiles []string, dir string, p profile.Profile, run Run) outcome {
	trace := filepath.Join(dir, "traces", traceName(run))
	tmpTrace := trace + ".tmp"
	os.Remove(tmpTrace)
	args := append(run.Cell.Args(), "-test.benchtime", "1x", "-test.count", "1", "-trace", tmpTrace)
	if len(profileFiles) > 0 {
		args = append(args, "-profile-file", strings.Join(profileFiles, ","))
	}
	rctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, binary, args...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	if p.CPUs > 0 {
		cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(p.CPUs))
	}
	// Ask the process to stop first; kill it if it does not within the delay.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	var stdout bytes.Buffer
	stderr := &tailBuffer{max: 8 << 10}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	err := cmd.Run()

	fail := func(reason string) outcome {
		os.Remove(tmpTrace)
		return outcome{failure: &Failure{Run: run, Reason: reason, Tail: failureTail(stdout.String(), stderr.String())}}
	}
	switch {
	case errors.Is(rctx.Err(), context.DeadlineExceeded):
		return fail(fmt.Sprintf("timeout after %v", cfg.Timeout))
	case ctx.Err() != nil:
		return fail("interrupted")
	case err != nil:
		return fail(err.Error())
	}
	out := outcome{units: benchfmt.UnitMetadataMap{}}
	r := benchfmt.NewReader(bytes.NewReader(stdout.Bytes()), "run "+strconv.Itoa(run.Index))
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			if c, ok := CellOf(rec); ok && c == run.Cell {
				out.results = append(out.results, rec.Clone())
			}
		case *benchfmt.UnitMetadata:
			u := *rec
			out.units[u.UnitMetadataKey] = &u
		}
	}
	if len(out.results) == 0 {
		return fail("no result for the cell in the output")
	}
	if err := os.Rename(tmpTrace, trace); err != nil {
		return fail("trace: " + err.Error())
	}
	return out
}

// CellOf returns the cell of a BenchmarkBackfill result.
func CellOf(r *benchfmt.Result) (bench.Cell, bool) {
	base, parts := r.Name.Parts()
	if string(base) != "Backfill" {
		return bench.Cell{}, false
	}
	var name []string
	for _, p := range parts {
		if s := string(p); strings.HasPrefix(s, "/") {
			name = append(name, s[1:])
		}
	}
	c, err := bench.ParseName(strings.Join(name, "/"))
	return c, err == nil
}

// traceName is the trace file of a run: the cell's values and the round.
func traceName(run Run) string {
	m := run.Cell.Only()
	var vals []string
	for _, d := range bench.Dimensions {
		vals = append(vals, strings.NewReplacer(":", "-", "+", "-", ",", "-").Replace(m.Get(d)))
	}
	return fmt.Sprintf("%s.r%d.jsonl", strings.Join(vals, "_"), run.Round)
}

// addConfig adds the harness's config keys to a result from the bench binary, which
// itself gives goos, goarch, pkg and cpu.
func addConfig(r *benchfmt.Result, src Source, m Machine, p profile.Profile) {
	procs := strconv.Itoa(m.Cores)
	if p.CPUs > 0 {
		procs = strconv.Itoa(p.CPUs)
	}
	commitTime := ""
	if !src.CommitTime.IsZero() {
		commitTime = src.CommitTime.UTC().Format(time.RFC3339)
	}
	for _, kv := range [][2]string{
		{"commit", src.Commit},
		{"commit-time", commitTime},
		{"branch", src.Branch},
		{"dirty", strconv.FormatBool(src.Dirty)},
		{"go", src.GoVersion},
		{"pebble", src.Pebble},
		{"cores", strconv.Itoa(m.Cores)},
		{"gomaxprocs", procs},
		{"machine", m.Fingerprint},
		{"profile", fmt.Sprintf("%s v%d", p.Name, p.Version)},
		{"disk", p.Disk()},
	} {
		if kv[1] != "" {
			r.SetConfig(kv[0], kv[1])
			i, _ := r.ConfigIndex(kv[0])
			r.Config[i].File = true // written to the results file, like the binary's own
		}
	}
}

// orderResults lists results by cell in plan order, and by round within a cell, so
// config lines change rarely in the file.
func orderResults(runs []Run, byRun map[int][]*benchfmt.Result) []*benchfmt.Result {
	var cells []bench.Cell
	byCell := map[bench.Cell][]*benchfmt.Result{}
	for _, run := range runs {
		if _, ok := byCell[run.Cell]; !ok {
			cells = append(cells, run.Cell)
			byCell[run.Cell] = nil
		}
		byCell[run.Cell] = append(byCell[run.Cell], byRun[run.Index]...)
	}
	var out []*benchfmt.Result
	for _, c := range cells {
		out = append(out, byCell[c]...)
	}
	return out
}

// writeResults rewrites results.txt: unit lines, then every result with its config.
func writeResults(dir string, results []*benchfmt.Result, units benchfmt.UnitMetadataMap) error {
	var buf bytes.Buffer
	w := benchfmt.NewWriter(&buf)
	keys := slices.SortedFunc(maps.Keys(units), func(a, b benchfmt.UnitMetadataKey) int {
		return cmp.Or(strings.Compare(a.Unit, b.Unit), strings.Compare(a.Key, b.Key))
	})
	for _, k := range keys {
		if err := w.Write(units[k]); err != nil {
			return err
		}
	}
	for _, r := range results {
		if err := w.Write(r); err != nil {
			return err
		}
	}
	return writeFileAtomic(filepath.Join(dir, "results.txt"), buf.Bytes())
}

func writeFailures(dir string, fs []Failure) error {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "run %d (round %d) BenchmarkBackfill/%s: %s\n", f.Run.Index, f.Run.Round, f.Run.Cell.Name(), f.Reason)
		for _, l := range strings.Split(strings.TrimRight(f.Tail, "\n"), "\n") {
			fmt.Fprintf(&b, "    %s\n", l)
		}
	}
	return writeFileAtomic(filepath.Join(dir, "failures.txt"), []byte(b.String()))
}

// failureTail is the end of a failed run's output: its stdout without the lines
// benchstat reads, then its stderr.
func failureTail(stdout, stderr string) string {
	var keep []string
	for _, l := range strings.Split(stdout, "\n") {
		k, _, _ := strings.Cut(l, ":")
		switch {
		case strings.HasPrefix(l, "Unit "), strings.HasPrefix(l, "Benchmark") && strings.Contains(l, "\t"):
		case k == "goos" || k == "goarch" || k == "pkg" || k == "cpu":
		default:
			keep = append(keep, l)
		}
	}
	out := strings.TrimSpace(strings.Join(keep, "\n") + "\n" + stderr)
	const lines = 20
	if ls := strings.Split(out, "\n"); len(ls) > lines {
		out = strings.Join(ls[len(ls)-lines:], "\n")
	}
	return out
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.buf) }

// writeFileAtomic writes data to a temporary file beside name and renames it over
// name, so readers see the old file or the new one, never a part.
func writeFileAtomic(name string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// quoteArgs renders a command line so that a shell would read it back the same.
func quoteArgs(args []string) string {
	var out []string
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}
