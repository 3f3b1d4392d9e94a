// Package comment renders the PR comment (and check run) from a run's verdict.json
// and plots, which it validates as hostile input.
package comment

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/render"
	"github.com/backfill-bench/backfill-bench/internal/files"
	"github.com/backfill-bench/backfill-bench/internal/usage"
)

// Config configures `benchrun comment`: the PR comment rendered by the
// base branch's code from a run's verdict.json, which a PR's run could have
// written (and, with a PR that edits the workflow, written anything into).
type Config struct {
	Verdict  string // the run's verdict.json
	Plots    string // the run's plots directory ("": none)
	PlotsOut string // where the PNGs that pass the checks are copied, for the assets branch
	PlotsURL string // the absolute URL they will be served under
	Changed  string // a file of the PR's changed paths, one a line ("": unknown)
	RunURL   string // the run, linked in the comment
	Out      string // the comment's markdown
	Check    string // the check run's JSON ("": none)
}

// Limits of what a run's artifact may hold: verdict.json well above what the
// largest matrix writes, PNGs above the largest plot.
const (
	maxVerdictBytes    = 8 << 20
	maxFindings        = 20000 // and entries of any list
	maxNameRunes       = 512   // a cell, unit or file name
	maxTextRunes       = 4096  // any other string: a note, an error
	maxPlots           = 24
	maxPlotBytes       = 4 << 20
	maxPlotPixels      = 25_000_000
	maxChangedFiles    = 10000
	maxCommentRunes    = 65536 // GitHub's limit on a comment's body
	maxUnverifiedShown = 20
)

// unverifiedDirs hold the benchmark's own CI: a PR that changes them ran it.
var unverifiedDirs = []string{"ci/", ".github/"}

var (
	plotName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}\.png$`)
	// A URL that stays a URL inside markdown: no space, quote, bracket or parenthesis.
	safeURL = regexp.MustCompile(`^https://[A-Za-z0-9._~/%+-]+(:[0-9]+)?[A-Za-z0-9._~/%+-]*$`)
)

// Run validates the run's verdict.json and plots and writes the comment
// (and the check run). The error names the file and what is wrong with it.
func Run(cfg Config) error {
	if cfg.Verdict == "" || cfg.Out == "" {
		return &usage.Error{Err: errors.New("comment: --verdict and --out are required")}
	}
	for flag, url := range map[string]string{"--plots-url": cfg.PlotsURL, "--run-url": cfg.RunURL} {
		if url != "" && !safeURL.MatchString(url) {
			return &usage.Error{Err: fmt.Errorf("comment: %s %q: want an https URL of letters, digits and ._~/%%+-", flag, url)}
		}
	}
	if cfg.Plots != "" && (cfg.PlotsOut == "" || cfg.PlotsURL == "") {
		return &usage.Error{Err: errors.New("comment: --plots needs --plots-out (where the checked PNGs go) and --plots-url (where they are served)")}
	}
	v, err := ReadVerdict(cfg.Verdict)
	if err != nil {
		return err
	}
	c := render.Comment{PlotsURL: cfg.PlotsURL, RunURL: cfg.RunURL}
	if cfg.Plots != "" {
		if c.Plots, err = CopyPlots(cfg.Plots, cfg.PlotsOut); err != nil {
			return err
		}
	}
	if cfg.Changed != "" {
		if c.Unverified, err = unverified(cfg.Changed); err != nil {
			return err
		}
	}
	var body bytes.Buffer
	render.WriteComment(&body, v, c)
	if n := len([]rune(body.String())); n > maxCommentRunes {
		return fmt.Errorf("%s: its comment would be %d characters, more than GitHub's %d", cfg.Verdict, n, maxCommentRunes)
	}
	if err := files.WriteAtomic(cfg.Out, body.Bytes()); err != nil {
		return err
	}
	if cfg.Check == "" {
		return nil
	}
	check, err := json.MarshalIndent(render.NewCheckRun(v, len(c.Unverified) > 0), "", "  ")
	if err != nil {
		return err
	}
	return files.WriteAtomic(cfg.Check, append(check, '\n'))
}

// ReadVerdict reads a verdict.json that may be hostile against its schema: the
// fields of judge.Verdict and no others, one JSON value, every string and list
// bounded (fields the verdict gains later too), known statuses and corrections,
// p-values in [0, 1], and counts that agree with the findings (a file cannot say
// "no regression" over a regressed finding).
func ReadVerdict(name string) (*judge.Verdict, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: not a verdict.json benchrun wrote: %s", name, fmt.Sprintf(format, args...))
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxVerdictBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > maxVerdictBytes {
		return nil, bad("larger than %d MiB", maxVerdictBytes>>20)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var v judge.Verdict
	if err := dec.Decode(&v); err != nil {
		return nil, bad("%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad("more than one JSON value")
	}
	if err := checkVerdict(&v); err != nil {
		return nil, bad("%v", err)
	}
	return &v, nil
}

func checkVerdict(v *judge.Verdict) error {
	switch {
	case len(v.Findings) > maxFindings:
		return fmt.Errorf("%d findings, more than %d", len(v.Findings), maxFindings)
	case v.Correction != judge.Holm && v.Correction != judge.BH:
		return fmt.Errorf("correction %q: want %s or %s", v.Correction, judge.Holm, judge.BH)
	case !(v.Alpha > 0 && v.Alpha < 1):
		return fmt.Errorf("alpha %v: want it in (0, 1)", v.Alpha)
	}
	if err := checkSizes(reflect.ValueOf(v).Elem(), "verdict"); err != nil {
		return err
	}
	// The names in the table's rows and headings are bounded tighter.
	names := append([]string{v.Base, v.Head}, append(v.OnlyInBase, v.OnlyInHead...)...)
	regressions, inconclusive := 0, 0
	for i, f := range v.Findings {
		names = append(names, f.Cell, f.Unit)
		switch {
		case f.Better < -1 || f.Better > 1:
			return fmt.Errorf("finding %d: better %d: want -1, 0 or 1", i+1, f.Better)
		case f.Base.N < 0 || f.Head.N < 0 || f.Pairs < 0:
			return fmt.Errorf("finding %d: a negative count", i+1)
		case !(f.P >= 0 && f.P <= 1) || !(f.PAdjusted >= 0 && f.PAdjusted <= 1):
			return fmt.Errorf("finding %d: p %v (adjusted %v): want them in [0, 1]", i+1, f.P, f.PAdjusted)
		}
		switch f.Status {
		case judge.Regression:
			regressions++
		case judge.Inconclusive, judge.Unconfirmed:
			inconclusive++
		}
	}
	if regressions != v.Regressions || inconclusive != v.Inconclusive || (regressions > 0) != v.Regression {
		return fmt.Errorf("it counts %d regressions (regression: %v) and %d inconclusive, its findings %d and %d",
			v.Regressions, v.Regression, v.Inconclusive, regressions, inconclusive)
	}
	for _, y := range v.Why {
		names = append(names, y.Cell)
	}
	for _, n := range names {
		if c := utf8.RuneCountInString(n); c > maxNameRunes {
			return fmt.Errorf("a name of %d characters, more than %d: %.40q…", c, maxNameRunes, n)
		}
	}
	return nil
}

// checkSizes bounds every string and list of a decoded value, fields the verdict
// gains later included: strings of maxTextRunes, lists of maxFindings entries.
func checkSizes(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return checkSizes(v.Elem(), path)
		}
	case reflect.String:
		if n := utf8.RuneCountInString(v.String()); n > maxTextRunes {
			return fmt.Errorf("%s: %d characters, more than %d: %.40q…", path, n, maxTextRunes, v.String())
		}
	case reflect.Slice, reflect.Map:
		if v.Len() > maxFindings {
			return fmt.Errorf("%s: %d entries, more than %d", path, v.Len(), maxFindings)
		}
		if v.Kind() == reflect.Map {
			for it := v.MapRange(); it.Next(); {
				if err := checkSizes(it.Key(), path+" key"); err != nil {
					return err
				}
				if err := checkSizes(it.Value(), fmt.Sprintf("%s[%v]", path, it.Key())); err != nil {
					return err
				}
			}
			return nil
		}
		for i := range v.Len() {
			if err := checkSizes(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if err := checkSizes(v.Field(i), path+"."+v.Type().Field(i).Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// CopyPlots checks the run's plots, dir/*.png, and copies those that pass to out:
// at most maxPlots, each a name of letters, digits, - and _, at most maxPlotBytes,
// a regular file that decodes as a PNG of at most maxPlotPixels pixels. Anything
// else in dir is an error that names it: the artifact is not what a run writes.
func CopyPlots(dir, out string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // a run without plots
	}
	if err != nil {
		return nil, err
	}
	if len(entries) > maxPlots {
		return nil, fmt.Errorf("%s: %d files, more than the %d plots a run draws", dir, len(entries), maxPlots)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		name := filepath.Join(dir, e.Name())
		if !e.Type().IsRegular() || !plotName.MatchString(e.Name()) {
			return nil, fmt.Errorf("%s: not a plot: want regular files named like deltas.png", name)
		}
		data, err := readPNG(name)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(out, e.Name()), data, 0o644); err != nil {
			return nil, err
		}
		names = append(names, strings.TrimSuffix(e.Name(), ".png"))
	}
	return names, nil
}

// readPNG reads a file that must be a PNG within the limits.
func readPNG(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPlotBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxPlotBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB", name, maxPlotBytes>>20)
	}
	if !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) {
		return nil, fmt.Errorf("%s: not a PNG (no PNG signature)", name)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: not a PNG: %w", name, err)
	}
	if cfg.Width*cfg.Height > maxPlotPixels {
		return nil, fmt.Errorf("%s: %d×%d pixels, more than a plot has", name, cfg.Width, cfg.Height)
	}
	if _, err := png.Decode(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("%s: not a PNG: %w", name, err)
	}
	return data, nil
}

// unverified lists the changed paths, one a line in file, that are under ci/ or
// .github/: a PR that changes them ran its own CI, which wrote the verdict. It
// names the first few, each cut to a name's length; a list too long to read whole
// counts as unverified too.
func unverified(file string) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	more := 0
	sc := bufio.NewScanner(f)
	for n := 0; sc.Scan(); n++ {
		if n == maxChangedFiles {
			return append(out, fmt.Sprintf("(more than %d changed files, not all read)", maxChangedFiles)), nil
		}
		p := sc.Text()
		if !slices.ContainsFunc(unverifiedDirs, func(dir string) bool { return strings.HasPrefix(p, dir) }) {
			continue
		}
		if len(out) == maxUnverifiedShown {
			more++
			continue
		}
		if r := []rune(p); len(r) > maxNameRunes {
			p = string(r[:maxNameRunes]) + "…"
		}
		out = append(out, p)
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("(%d more)", more))
	}
	if err := sc.Err(); err != nil {
		return append(out, fmt.Sprintf("(the changed files could not all be read: %v)", err)), nil
	}
	return out, nil
}
