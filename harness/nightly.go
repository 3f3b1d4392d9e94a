package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/scankind"
	"github.com/backfill-bench/backfill-bench/harness/history"
	"github.com/backfill-bench/backfill-bench/harness/runner"
	"github.com/backfill-bench/backfill-bench/harness/testbed"
	"github.com/backfill-bench/backfill-bench/internal/files"
)

// NightlyRecoveries are the nightly's recovery cells: the first cell of the
// matrix on its first in-memory profile (a power loss needs the crashable
// in-memory filesystem), persist off and on, the power cut at 90 % of the scan.
// Its scan is the matrix's first that can recover (scankind's Recovers; snapshot
// cannot yet), or the first kind that can when the matrix has none.
func NightlyRecoveries(m contract.Matrix, profiles *profile.Set) []runner.Recovery {
	scan := scankind.Recoverable()[0]
	for _, s := range m.Scans {
		if k, ok := scankind.Lookup(s); ok && k.Recovers {
			scan = s
			break
		}
	}
	for _, name := range m.Profiles {
		if p, err := profiles.Get(name); err != nil || p.FS != profile.FSMem || len(m.Workloads) == 0 || len(m.Rows) == 0 || len(m.Scans) == 0 || len(m.Barriers) == 0 || len(m.Pars) == 0 {
			continue
		}
		var out []runner.Recovery
		for _, persist := range []bool{false, true} {
			out = append(out, runner.Recovery{Crash: 90, Cell: contract.Cell{Profile: name, Workload: m.Workloads[0], Rows: m.Rows[0],
				Persist: persist, Scan: scan, Barrier: m.Barriers[0], Par: m.Pars[0]}})
		}
		return out
	}
	return nil
}

// NightlyConfig configures `benchrun nightly`.
type NightlyConfig struct {
	Run      RunConfig      // the matrix to run; ignored with Results
	Results  string         // a results file to record instead of running (merged shards)
	History  string         // default <module>/results/history
	Analysis history.Config // thresholds, alpha and correction as compare takes them
}

// oneMachine is the machine fingerprint of a night's results, refused when they
// come from more than one machine: a night is compared with nights of its machine.
func oneMachine(results []*benchfmt.Result, file string) (string, error) {
	var seen []string
	for _, r := range results {
		if m := r.GetConfig(contract.ConfigMachine); !slices.Contains(seen, m) {
			seen = append(seen, m)
		}
	}
	if len(seen) > 1 {
		return "", &ConfigError{fmt.Errorf("nightly: %s holds results of %d machines (fingerprints %s): record each machine's results on their own", file, len(seen), strings.Join(seen, ", "))}
	}
	return seen[0], nil
}

// nightName names a night by the UTC time of the run and its commit, with a
// number appended when that name is taken (two records in one second).
func nightName(dir string, now time.Time, commit string) string {
	base := now.UTC().Format("20060102T150405Z") + "-" + contract.ShortCommit(commit)
	name := base
	for i := 2; ; i++ {
		if _, err := os.Stat(filepath.Join(dir, name)); os.IsNotExist(err) {
			return name
		}
		name = fmt.Sprintf("%s-%d", base, i)
	}
}

// NightlyReport is what a nightly run found.
type NightlyReport struct {
	Night   string // the new night's directory
	Dir     string // the machine's history directory
	Nights  int
	Alerts  []history.Alert
	Newest  []history.Alert // regressions the newest night starts
	RunErr  error           // failed runs, kept going
	Results string          // the results file recorded
}

// Nightly runs the matrix (or takes a results file), records it in the history of
// its machine, looks for change points, newest-night regressions and drift, draws
// the trends and writes nightly.md and alerts.json. The error is ErrRegression when
// the newest night starts a regression.
func Nightly(ctx context.Context, cfg NightlyConfig) (*NightlyReport, error) {
	if err := cfg.Analysis.Options.Validate(); err != nil {
		return nil, &ConfigError{err}
	}
	rep := &NightlyReport{Results: cfg.Results}
	var results []*benchfmt.Result
	var units benchfmt.UnitMetadataMap
	root := cfg.History
	if root == "" {
		checkout, err := testbed.InspectCheckout(ctx, cfg.Run.Src)
		if err != nil {
			return nil, fmt.Errorf("nightly: %w (or pass --history)", err)
		}
		root = filepath.Join(checkout.Dir, "results", "history")
	}
	if rep.Results == "" {
		run, err := Run(ctx, cfg.Run)
		if run == nil || ctx.Err() != nil || len(run.Results) == 0 {
			return nil, errors.Join(errors.New("nightly: nothing to record"), err)
		}
		rep.RunErr = err
		rep.Results = filepath.Join(run.Dir, "results.txt")
		results, units = append(slices.Clip(run.Results), run.Extras...), run.Units
	} else {
		var err error
		if results, units, err = contract.ReadFiles(rep.Results); err != nil {
			return nil, err
		}
	}
	if len(results) == 0 {
		return nil, fmt.Errorf("nightly: no results in %s", rep.Results)
	}
	fingerprint, err := oneMachine(results, rep.Results)
	if err != nil {
		return nil, err
	}
	if fingerprint == "" {
		fingerprint = testbed.InspectMachine().Fingerprint
	}
	rep.Dir = history.Dir(root, fingerprint)
	nights, skipped, err := history.Load(root, fingerprint)
	if err != nil {
		return nil, err
	}
	for _, s := range skipped {
		cfg.Run.logger().Warn(s)
	}
	rep.Night = nightName(rep.Dir, time.Now(), results[0].GetConfig(contract.ConfigCommit))
	nightDir := filepath.Join(rep.Dir, rep.Night)
	newest := history.NewNight(rep.Night, results, units)
	nights = append(nights, newest)
	history.Sort(nights)
	rep.Nights = len(nights)

	analysis := cfg.Analysis
	if pinned, err := os.ReadFile(filepath.Join(rep.Dir, "baseline")); err == nil && analysis.Baseline == "" {
		analysis.Baseline = strings.TrimSpace(string(pinned))
	}
	if rep.Alerts, err = history.Analyze(nights, analysis); err != nil {
		return nil, err
	}
	rep.Newest = history.NewestRegressions(rep.Alerts)
	if err := os.MkdirAll(rep.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	trends, trendErr := history.Trends(nights, rep.Dir)
	var md strings.Builder
	history.WriteReport(&md, history.Report{Machine: fingerprint, Nights: nights, Newest: newest, Alerts: rep.Alerts,
		Analysis: analysis, RunErr: rep.RunErr, Trends: trends, TrendErr: trendErr})
	js, err := history.AlertsJSON(rep.Alerts)
	if err != nil {
		return nil, err
	}
	// The night is recorded only now that its analysis and report succeeded.
	if err := os.MkdirAll(nightDir, 0o755); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	if err := writeResults(filepath.Join(nightDir, "results.txt"), results, units); err != nil {
		return nil, err
	}
	for _, f := range []string{filepath.Join(rep.Dir, "nightly.md"), filepath.Join(nightDir, "nightly.md")} {
		if err := files.WriteAtomic(f, []byte(md.String())); err != nil {
			return nil, err
		}
	}
	if err := files.WriteAtomic(filepath.Join(rep.Dir, "alerts.json"), js); err != nil {
		return nil, err
	}
	fmt.Fprint(cfg.Run.Stdout, md.String())
	fmt.Fprintf(cfg.Run.Stdout, "\nhistory: %s (%d nights)\n", rep.Dir, rep.Nights)
	switch {
	case len(rep.Newest) > 0:
		return rep, ErrRegression
	case rep.RunErr != nil:
		return rep, rep.RunErr
	}
	return rep, nil
}
