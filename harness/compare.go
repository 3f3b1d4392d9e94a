package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/bench"
)

// ErrRegression is returned by Compare when the verdict is a regression.
var ErrRegression = errors.New("regression")

// CompareConfig configures `benchrun compare`.
type CompareConfig struct {
	Base, Head   string // a git ref, a results file or a results directory; Head "": the working tree
	Matrix       bench.Matrix
	ProfileFiles []string
	Count        int // runs of every cell on each side (default 10)
	Confirm      int // batches of Count runs re-run for suspected regressions (default 1; 0: none)
	Thresholds   Thresholds
	Correction   string  // Holm or BH
	Alpha        float64 // significance after correction (default 0.05)
	Src          string  // a directory in the checkout: the git repository and the working tree
	Out          string  // default <module>/compare/<base>..<head>
	Timeout      time.Duration
	CommandLine  []string
	Stdout       io.Writer
	Progress     io.Writer
	Terminal     bool
	Logger       *slog.Logger
	NoPlots      bool
}

// CompareIgnore are the config keys that differ between two commits by nature;
// benchstat is told to ignore them so that it puts both sides in one table.
const CompareIgnore = "commit,commit-time,branch,dirty,go,pebble"

// sideSpec is what a user named as one side.
type sideSpec struct {
	arg  string
	file string // a results file, or "" for a ref
	ref  string // a git ref; "" with file "" is the working tree
}

func parseSide(arg string) sideSpec {
	if arg == "" {
		return sideSpec{}
	}
	if st, err := os.Stat(arg); err == nil {
		if st.IsDir() {
			return sideSpec{arg: arg, file: filepath.Join(arg, "results.txt")}
		}
		return sideSpec{arg: arg, file: arg}
	}
	return sideSpec{arg: arg, ref: arg}
}

func (s sideSpec) label() string {
	if s.arg == "" {
		return "working-tree"
	}
	return s.arg
}

// Validate checks the configuration without running anything.
func (cfg *CompareConfig) Validate() error {
	if cfg.Base == "" {
		return errors.New("compare: name the base: a git ref, a results file or a results directory")
	}
	base, head := parseSide(cfg.Base), parseSide(cfg.Head)
	if (base.file == "") != (head.file == "") {
		return fmt.Errorf("compare %s with %s: compare two refs (or a ref with the working tree) or two results files, not one of each", base.label(), head.label())
	}
	if cfg.Count < 1 {
		return fmt.Errorf("--count %d: must be ≥ 1", cfg.Count)
	}
	if cfg.Confirm < 0 {
		return fmt.Errorf("--confirm %d: must be ≥ 0", cfg.Confirm)
	}
	if cfg.Alpha <= 0 || cfg.Alpha >= 1 {
		return fmt.Errorf("--alpha %v: must be in (0, 1)", cfg.Alpha)
	}
	if _, err := Adjust(cfg.Correction, nil); err != nil {
		return fmt.Errorf("--correction: %w", err)
	}
	if base.file == "" {
		run := RunConfig{Matrix: cfg.Matrix, ProfileFiles: cfg.ProfileFiles, Count: cfg.Count, Timeout: cfg.Timeout}
		return run.Validate()
	}
	return nil
}

// Compare measures or reads both sides, judges them and writes the comparison
// directory. The verdict's error is ErrRegression when a regression stands.
func Compare(ctx context.Context, cfg CompareConfig) (*Verdict, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	base, head := parseSide(cfg.Base), parseSide(cfg.Head)
	src, err := InspectSource(ctx, cfg.Src)
	if err != nil {
		return nil, err
	}
	dir := cfg.Out
	if dir == "" {
		dir = filepath.Join(src.Dir, "compare", safeName(base.label())+".."+safeName(head.label()))
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("compare directory: %w", err)
	}

	var notes []string
	var confirm func(cells []bench.Cell) (string, string, error)
	if base.file != "" {
		for name, s := range map[string]sideSpec{"base.txt": base, "head.txt": head} {
			data, err := os.ReadFile(s.file)
			if err != nil {
				return nil, fmt.Errorf("compare: %w", err)
			}
			if err := WriteFileAtomic(filepath.Join(dir, name), data); err != nil {
				return nil, err
			}
		}
		if cfg.Confirm > 0 {
			notes = append(notes, "results files cannot be re-run: regressions are not confirmed")
		}
		if err := WriteFileAtomic(filepath.Join(dir, "command.txt"), []byte(quoteArgs(cfg.CommandLine)+"\n")); err != nil {
			return nil, err
		}
	} else {
		m, err := newMeasurement(ctx, cfg, src, dir, base, head)
		if m != nil {
			defer m.close()
		}
		if err != nil {
			return nil, err
		}
		if err := m.run(ctx, cfg.Matrix.Cells(), cfg.Count, "base.txt", "head.txt"); err != nil {
			return nil, err
		}
		confirm = func(cells []bench.Cell) (string, string, error) {
			return "base-confirm.txt", "head-confirm.txt",
				m.run(ctx, cells, cfg.Count*cfg.Confirm, "base-confirm.txt", "head-confirm.txt")
		}
	}

	v, err := judgeFiles(dir, "base.txt", "head.txt", cfg)
	if err != nil {
		return nil, err
	}
	v.Base, v.Head = base.label(), head.label()
	v.Notes = append(v.Notes, notes...)
	if v.Regression && confirm != nil && cfg.Confirm > 0 {
		if err := confirmRegressions(v, cfg, dir, confirm); err != nil {
			return v, err
		}
	}
	if err := writeComparison(ctx, cfg, src, dir, v); err != nil {
		return v, err
	}
	if v.Regression {
		return v, ErrRegression
	}
	return v, nil
}

// judgeFiles reads two results files of dir and judges head against base.
func judgeFiles(dir, baseFile, headFile string, cfg CompareConfig) (*Verdict, error) {
	results, units, err := readResultFiles(filepath.Join(dir, baseFile), filepath.Join(dir, headFile))
	if err != nil {
		return nil, err
	}
	g, err := NewGrid(GridConfig{Row: ".fullname", Col: ".file", Ignore: CompareIgnore}, results, units)
	if err != nil {
		return nil, err
	}
	if len(g.Tables) == 0 {
		return nil, fmt.Errorf("compare: no benchmark results in %s and %s", baseFile, headFile)
	}
	return Judge(g, cfg.Thresholds, cfg.Correction, cfg.Alpha)
}

// confirmRegressions re-runs the cells of suspected regressions and keeps a
// regression only if the fresh samples, judged on their own, show it again.
func confirmRegressions(v *Verdict, cfg CompareConfig, dir string, rerun func([]bench.Cell) (string, string, error)) error {
	var cells []bench.Cell
	seen := map[string]bool{}
	for _, f := range v.Findings {
		if f.Status != Regression || seen[f.Cell] {
			continue
		}
		seen[f.Cell] = true
		if c, ok := cellOfName(f.Cell); ok {
			cells = append(cells, c)
		}
	}
	baseFile, headFile, err := rerun(cells)
	if err != nil {
		return err
	}
	again, err := judgeFiles(dir, baseFile, headFile, cfg)
	if err != nil {
		return err
	}
	confirmed := map[[2]string]Finding{}
	for _, f := range again.Findings {
		confirmed[[2]string{f.Cell, f.Unit}] = f
	}
	v.Regressions = 0
	for i := range v.Findings {
		f := &v.Findings[i]
		if f.Status != Regression {
			continue
		}
		c, ok := confirmed[[2]string{f.Cell, f.Unit}]
		if ok {
			f.Confirm = &c.Head
		}
		if ok && c.Status == Regression {
			v.Regressions++
		} else {
			f.Status = Unconfirmed
		}
	}
	v.Regression = v.Regressions > 0
	v.Notes = append(v.Notes, fmt.Sprintf("suspected regressions were re-run %d× on both sides (%s, %s) and kept only if seen again", cfg.Count*cfg.Confirm, baseFile, headFile))
	return nil
}

// cellOfName parses a grid row name "Backfill/profile=…/par=2-2".
func cellOfName(name string) (bench.Cell, bool) {
	r := &benchfmt.Result{Name: benchfmt.Name(name)}
	return CellOf(r)
}

// readResultFiles reads results files; each result keeps its file name for .file.
func readResultFiles(names ...string) ([]*benchfmt.Result, benchfmt.UnitMetadataMap, error) {
	files := benchfmt.Files{Paths: names}
	var results []*benchfmt.Result
	for files.Scan() {
		switch rec := files.Result().(type) {
		case *benchfmt.Result:
			results = append(results, rec.Clone())
		case *benchfmt.SyntaxError:
			return nil, nil, rec
		}
	}
	if err := files.Err(); err != nil {
		return nil, nil, err
	}
	return results, files.Units(), nil
}

// measurement builds both sides' bench binaries and runs cells on them, interleaved.
type measurement struct {
	x         *executor
	sides     []*side
	prog      func(total int) *progress
	worktrees []func()
}

func newMeasurement(ctx context.Context, cfg CompareConfig, src Source, dir string, specs ...sideSpec) (*measurement, error) {
	x, err := newExecutor(dir, cfg.ProfileFiles, cfg.Timeout, cfg.CommandLine)
	if err != nil {
		return nil, err
	}
	m := &measurement{x: x, prog: func(total int) *progress {
		return newProgress(cfg.Progress, cfg.Terminal, cfg.Logger, total)
	}}
	for i, spec := range specs {
		label := []string{"base", "head"}[i]
		s := &side{label: label, src: src, binary: filepath.Join(dir, label+".test")}
		if spec.ref != "" {
			wt, remove, err := addWorktree(ctx, src.Dir, spec.ref)
			if err != nil {
				return m, err
			}
			m.worktrees = append(m.worktrees, remove)
			if s.src, err = InspectSource(ctx, wt); err != nil {
				return m, err
			}
		}
		cfg.Logger.Info("building the bench binary", "side", label, "ref", spec.label(), "commit", s.src.Short())
		if err := BuildBench(ctx, s.src.Dir, s.binary); err != nil {
			return m, &BuildError{Side: spec.label(), Err: err}
		}
		m.sides = append(m.sides, s)
	}
	return m, nil
}

// run measures the cells count times on each side, interleaved, into two files.
func (m *measurement) run(ctx context.Context, cells []bench.Cell, count int, baseFile, headFile string) error {
	m.sides[0].file, m.sides[1].file = baseFile, headFile
	for _, s := range m.sides {
		s.results, s.units = nil, nil
	}
	runs := Plan(cells, count, 2)
	if err := m.x.execute(ctx, m.sides, runs, m.prog(len(runs))); err != nil {
		return err
	}
	return m.x.err(ctx, len(runs))
}

func (m *measurement) close() {
	for _, s := range m.sides {
		os.Remove(s.binary)
	}
	for _, remove := range m.worktrees {
		remove()
	}
}

// BuildError is a side that does not build: exit status 2, not a regression.
type BuildError struct {
	Side string
	Err  error
}

func (e *BuildError) Error() string { return fmt.Sprintf("%s: %v", e.Side, e.Err) }
func (e *BuildError) Unwrap() error { return e.Err }

// addWorktree checks ref out in a temporary git worktree of the repository at repo.
// The ref goes to git as an argument after --end-of-options, never through a shell.
func addWorktree(ctx context.Context, repo, ref string) (dir string, remove func(), err error) {
	commit, err := command(ctx, repo, "git", "rev-parse", "--verify", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return "", nil, fmt.Errorf("%q is neither a results file nor a commit of %s: %w", ref, repo, err)
	}
	parent, err := os.MkdirTemp("", "backfill-bench-worktree-")
	if err != nil {
		return "", nil, err
	}
	dir = filepath.Join(parent, "src")
	if _, err := command(ctx, repo, "git", "worktree", "add", "--detach", dir, commit); err != nil {
		os.RemoveAll(parent)
		return "", nil, err
	}
	return dir, func() {
		command(context.Background(), repo, "git", "worktree", "remove", "--force", dir)
		os.RemoveAll(parent)
	}, nil
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// safeName turns a ref or a path into a directory name.
func safeName(s string) string {
	s = strings.Trim(unsafeChars.ReplaceAllString(s, "-"), "-.")
	if s == "" {
		return "x"
	}
	return s
}

// writeComparison writes benchstat's own view, verdict.json and report.md, and
// prints the table.
func writeComparison(ctx context.Context, cfg CompareConfig, src Source, dir string, v *Verdict) error {
	// benchstat is a tool of this module; a checkout without it falls back to the
	// module of the current directory.
	args := []string{"tool", "benchstat", "-ignore", CompareIgnore, filepath.Join(dir, "base.txt"), filepath.Join(dir, "head.txt")}
	out, err := command(ctx, src.Dir, "go", args...)
	if err != nil {
		out, err = command(ctx, "", "go", args...)
	}
	if err != nil {
		out = "go tool benchstat failed: " + err.Error()
		v.Notes = append(v.Notes, "go tool benchstat failed; see benchstat.txt")
	}
	if err := WriteFileAtomic(filepath.Join(dir, "benchstat.txt"), []byte(out+"\n")); err != nil {
		return err
	}
	if err := writeVerdictJSON(dir, v); err != nil {
		return err
	}
	var plots []string
	var table bytes.Buffer
	if !cfg.NoPlots {
		plots = drawPlots(&table, cfg.Logger, dir)
	}
	var report bytes.Buffer
	WriteReport(&report, v, cfg.CommandLine, InspectMachine(), plots)
	if err := WriteFileAtomic(filepath.Join(dir, "report.md"), report.Bytes()); err != nil {
		return err
	}
	var printed bytes.Buffer
	WriteVerdictTable(&printed, v)
	fmt.Fprintf(&printed, "\ncomparison: %s\n%s", dir, table.String())
	_, err = cfg.Stdout.Write(printed.Bytes())
	return err
}

func writeVerdictJSON(dir string, v *Verdict) error {
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(dir, "verdict.json"), append(js, '\n'))
}
