package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/jobtrace"
	"github.com/backfill-bench/backfill-bench/harness/runner/progress"
	"github.com/backfill-bench/backfill-bench/harness/testbed"
	"github.com/backfill-bench/backfill-bench/internal/callgrind"
)

// Instructions makes a pass count each job's instructions under callgrind
// (--measure instructions) instead of timing it alone.
type Instructions struct {
	Valgrind string // valgrind's version, from callgrind.Check
}

func globOr(pattern string) []string {
	m, _ := filepath.Glob(pattern)
	return m
}

// inSkiplist selects the functions of Pebble's memtable skiplist, whose work
// is counted apart: its node heights come from a generator the Go runtime seeds per
// process (Valgrind gives every run fresh seed bytes), so how many levels and
// keys its inserts and searches visit varies from run to run.
func inSkiplist(fn string) bool { return strings.Contains(fn, "/internal/arenaskl.") }

// skiplistHelpers are the functions the skiplist calls whose instructions vary
// with its node heights (the key compares, callers first): a share of theirs
// goes with the skiplist's, by the share of their calls it made.
func skiplistHelpers() []string {
	return []string{"bytes.Compare", "internal/bytealg.Compare", "cmpbody"}
}

// addInstructions adds the job window's instructions per row and per barrier to
// the job's results, from its callgrind output and its trace (the rows and
// barriers of its job): without those of the memtable skiplist, which are added
// apart per row (not judged).
func addInstructions(o *outcome, callgrindOut string) error {
	all, skiplist, windows, err := callgrind.ReadWindowsApart(callgrindOut, inSkiplist, skiplistHelpers())
	total := float64(all) - skiplist
	if err != nil {
		return err
	}
	if windows == 0 {
		return errors.New("callgrind dumped no job window: this bench binary opens none (built before --measure instructions); measure such a commit with --measure time")
	}
	if o.trace == "" {
		return errors.New("the job wrote no trace, which gives its rows and barriers: this bench binary is too old for --measure instructions")
	}
	traces, err := jobtrace.ReadTraceFile(o.trace)
	if err != nil {
		return err
	}
	var rows, barriers int64
	for _, t := range traces {
		rows += t.SnapshotRows + t.UpstreamRows
		barriers += int64(len(t.Epochs))
	}
	if rows == 0 || barriers == 0 {
		return fmt.Errorf("trace %s: %d rows and %d barriers: nothing to count instructions per", o.trace, rows, barriers)
	}
	units := contract.UnitMap()
	for _, unit := range []string{contract.UnitInstrPerRow, contract.UnitInstrPerBarrier, contract.UnitSkiplistPerRow} {
		k := benchfmt.UnitMetadataKey{Unit: unit, Key: "better"}
		o.units[k] = units[k]
	}
	for _, r := range o.results {
		r.Values = append(r.Values,
			benchfmt.Value{Value: total / float64(rows), Unit: contract.UnitInstrPerRow},
			benchfmt.Value{Value: total / float64(barriers), Unit: contract.UnitInstrPerBarrier},
			benchfmt.Value{Value: skiplist / float64(rows), Unit: contract.UnitSkiplistPerRow})
	}
	return nil
}

// countedConfig records how a counted result was counted: counts compare only
// under the same valgrind and settings. Its job ran on one P, whatever the profile.
func countedConfig(r *benchfmt.Result, in *Instructions) {
	for _, kv := range [][2]string{
		{contract.ConfigValgrind, in.Valgrind},
		{contract.ConfigValgrindSettings, callgrind.Settings()},
		{contract.ConfigGOMAXPROCS, "1"},
	} {
		testbed.SetFileConfig(r, kv[0], kv[1])
	}
}

// runCounted runs the trials of a counting pass as many at once as this machine
// has CPUs: counts do not depend on what else runs, so pairs need not share the
// machine in step (each valgrind runs its job's threads one at a time anyway).
func (p *pass) runCounted(ctx context.Context, prog *progress.Bar) error {
	type finished struct {
		t    Trial
		prof profile.Profile
		o    outcome
	}
	done := make(chan finished, len(p.trials))
	slots := max(1, runtime.NumCPU())
	next, running := 0, 0
	for {
		for running < slots && next < len(p.trials) && ctx.Err() == nil {
			t := p.trials[next]
			next++
			prof, _ := p.cfg.Profiles.Get(t.Cell.Profile)
			prog.Start(t.Cell.Name())
			running++
			go func() { done <- finished{t, prof, p.runOne(ctx, p.sides[t.Side], prof, t)} }()
		}
		if running == 0 {
			return nil
		}
		f := <-done
		running--
		if ctx.Err() != nil && f.o.failure != nil {
			continue // interrupted: neither a result nor a failure
		}
		if err := p.record(f.t, f.prof, f.o, false); err != nil {
			return err
		}
		prog.Done(f.t.Index, f.t.Cell.Name(), f.o.failure.reason())
	}
}
