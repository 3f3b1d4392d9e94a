package harness

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
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

// side is one build of the benchmarks: a plain run has one, a compare two.
type side struct {
	label   string // "" in a plain run; "base" or "head"
	src     Source
	binary  string
	file    string                     // its results file in the directory
	results map[int][]*benchfmt.Result // by run index
	units   benchfmt.UnitMetadataMap
}

// ordered lists the side's results by cell in plan order and by round within a
// cell, so that config lines change rarely in its file.
func (s *side) ordered(runs []Run) []*benchfmt.Result {
	var cells []bench.Cell
	byCell := map[bench.Cell][]*benchfmt.Result{}
	for _, run := range runs {
		if _, ok := byCell[run.Cell]; !ok {
			cells = append(cells, run.Cell)
			byCell[run.Cell] = nil
		}
		byCell[run.Cell] = append(byCell[run.Cell], s.results[run.Index]...)
	}
	var out []*benchfmt.Result
	for _, c := range cells {
		out = append(out, byCell[c]...)
	}
	return out
}

// executor runs jobs as processes of bench binaries and keeps a results directory
// up to date after each.
type executor struct {
	dir          string
	profiles     *profile.Set
	profileFiles []string // absolute, for the bench binary
	timeout      time.Duration
	machine      Machine
	done         int
	failures     []Failure
}

// newExecutor makes the results directory and records the command line in it.
func newExecutor(dir string, profileFiles []string, timeout time.Duration, commandLine []string) (*executor, error) {
	// Absolute: bench binaries run in it and get paths in it.
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	x := &executor{dir: dir, timeout: timeout, machine: InspectMachine()}
	if x.timeout == 0 {
		x.timeout = 10 * time.Minute
	}
	if x.profiles, err = profile.NewSet(profileFiles); err != nil {
		return nil, err
	}
	for _, f := range profileFiles {
		a, err := filepath.Abs(f)
		if err != nil {
			return nil, err
		}
		x.profileFiles = append(x.profileFiles, a)
	}
	if err := os.MkdirAll(filepath.Join(dir, "traces"), 0o755); err != nil {
		return nil, fmt.Errorf("results directory: %w", err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "command.txt"), []byte(quoteArgs(commandLine)+"\n")); err != nil {
		return nil, err
	}
	return x, nil
}

// execute runs the plan, each run on its side, stopping early only when ctx is
// done. A failed run is recorded and the rest go on. The returned error is about
// the results directory only.
func (x *executor) execute(ctx context.Context, sides []*side, runs []Run, prog *progress) error {
	for _, s := range sides {
		if s.results == nil {
			s.results, s.units = map[int][]*benchfmt.Result{}, benchfmt.UnitMetadataMap{}
		}
	}
	for _, run := range runs {
		if ctx.Err() != nil {
			break
		}
		s := sides[run.Side]
		p, _ := x.profiles.Get(run.Cell.Profile)
		prog.start(run)
		out := x.runOne(ctx, s, p, run)
		if ctx.Err() != nil && out.failure != nil {
			break // interrupted: neither a result nor a failure
		}
		x.done++
		if out.failure != nil {
			x.failures = append(x.failures, *out.failure)
			if err := writeFailures(x.dir, x.failures); err != nil {
				return err
			}
		} else {
			for _, r := range out.results {
				addConfig(r, s.src, x.machine, p)
			}
			s.results[run.Index] = out.results
			maps.Copy(s.units, out.units)
		}
		prog.done(run, out.failure)
		if err := writeResults(filepath.Join(x.dir, s.file), s.ordered(runs), s.units); err != nil {
			return err
		}
	}
	prog.finish()
	return nil
}

// err summarizes an execution that is over: interrupted, with failed runs, or nil.
func (x *executor) err(ctx context.Context, planned int) error {
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted after %d of %d runs; the finished ones are in %s", x.done, planned, x.dir)
	}
	if len(x.failures) > 0 {
		return fmt.Errorf("%d of %d runs failed (see %s)", len(x.failures), planned, filepath.Join(x.dir, "failures.txt"))
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

// runOne runs one job of the cell in its own process of the side's bench binary.
func (x *executor) runOne(ctx context.Context, s *side, p profile.Profile, run Run) outcome {
	traces := filepath.Join(x.dir, "traces", s.label)
	if err := os.MkdirAll(traces, 0o755); err != nil {
		return outcome{failure: &Failure{Run: run, Side: s.label, Reason: err.Error()}}
	}
	trace := filepath.Join(traces, traceName(run))
	tmpTrace := trace + ".tmp"
	os.Remove(tmpTrace)
	args := append(run.Cell.Args(), "-test.benchtime", "1x", "-test.count", "1", "-trace", tmpTrace)
	if len(x.profileFiles) > 0 {
		args = append(args, "-profile-file", strings.Join(x.profileFiles, ","))
	}
	rctx, cancel := context.WithTimeout(ctx, x.timeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, s.binary, args...)
	cmd.Dir = x.dir
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
		return outcome{failure: &Failure{Run: run, Side: s.label, Reason: reason, Tail: failureTail(stdout.String(), stderr.String())}}
	}
	switch {
	case errors.Is(rctx.Err(), context.DeadlineExceeded):
		return fail(fmt.Sprintf("timeout after %v", x.timeout))
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
	// A bench binary that wrote no trace (an older commit) still has its results.
	if err := os.Rename(tmpTrace, trace); err != nil && !errors.Is(err, os.ErrNotExist) {
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

// writeResults rewrites a results file: unit lines, then every result with its config.
func writeResults(name string, results []*benchfmt.Result, units benchfmt.UnitMetadataMap) error {
	var buf bytes.Buffer
	if err := writeBenchfmt(&buf, results, units); err != nil {
		return err
	}
	return WriteFileAtomic(name, buf.Bytes())
}

func writeBenchfmt(w io.Writer, results []*benchfmt.Result, units benchfmt.UnitMetadataMap) error {
	bw := benchfmt.NewWriter(w)
	keys := slices.SortedFunc(maps.Keys(units), func(a, b benchfmt.UnitMetadataKey) int {
		return cmp.Or(strings.Compare(a.Unit, b.Unit), strings.Compare(a.Key, b.Key))
	})
	for _, k := range keys {
		if err := bw.Write(units[k]); err != nil {
			return err
		}
	}
	for _, r := range results {
		if err := bw.Write(r); err != nil {
			return err
		}
	}
	return nil
}

func writeFailures(dir string, fs []Failure) error {
	var b strings.Builder
	for _, f := range fs {
		side := ""
		if f.Side != "" {
			side = ", " + f.Side
		}
		fmt.Fprintf(&b, "run %d (round %d%s) BenchmarkBackfill/%s: %s\n", f.Run.Index, f.Run.Round, side, f.Run.Cell.Name(), f.Reason)
		for _, l := range strings.Split(strings.TrimRight(f.Tail, "\n"), "\n") {
			fmt.Fprintf(&b, "    %s\n", l)
		}
	}
	return WriteFileAtomic(filepath.Join(dir, "failures.txt"), []byte(b.String()))
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

// WriteFileAtomic writes data to a temporary file beside name and renames it over
// name, so readers see the old file or the new one, never a part.
func WriteFileAtomic(name string, data []byte) error {
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
