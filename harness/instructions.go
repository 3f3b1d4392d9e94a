package harness

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/runner"
	"github.com/backfill-bench/backfill-bench/internal/callgrind"
)

// What --measure takes: wall-clock time (each job alone or in a duet), or the
// instructions of each job's window counted under callgrind.
const (
	MeasureTime         = "time"
	MeasureInstructions = "instructions"
)

// instructions checks that this machine can count and says with which valgrind;
// nil when the measure is wall-clock time.
func (m Measure) instructions(ctx context.Context) (*runner.Instructions, error) {
	switch m.By {
	case "", MeasureTime:
		return nil, nil
	case MeasureInstructions:
		version, err := callgrind.Check(ctx)
		if err != nil {
			return nil, err
		}
		return &runner.Instructions{Valgrind: version}, nil
	}
	return nil, fmt.Errorf("--measure %q: want time or instructions", m.By)
}

// buildEnv is what the go command's environment adds to build this measure's
// bench binary: callgrind.BuildEnv when counting; nil for wall-clock time.
func (s *measureSetup) buildEnv() []string {
	if s == nil || s.instructions == nil {
		return nil
	}
	return callgrind.BuildEnv()
}

// countedWith is how a side's results were counted: the distinct valgrind
// versions and settings of its results, "" for results not counted.
func countedWith(results []*benchfmt.Result) []string {
	var out []string
	for _, r := range results {
		k := ""
		if v := r.GetConfig(contract.ConfigValgrind); v != "" {
			k = v + " " + r.GetConfig(contract.ConfigValgrindSettings)
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// checkCounts refuses to judge instruction counts taken with different valgrind
// versions or settings (or counted on one side only): they are not comparable.
// The note says that counts decide, when they do.
func checkCounts(base, head []*benchfmt.Result) (note string, err error) {
	b, h := countedWith(base), countedWith(head)
	if len(b) == 1 && b[0] == "" && len(h) == 1 && h[0] == "" {
		return "", nil // wall-clock on both sides
	}
	if !slices.Equal(b, h) || len(b) != 1 {
		say := func(s []string) string {
			for i, k := range s {
				if k == "" {
					s[i] = "not counted (--measure time)"
				}
			}
			return strings.Join(s, "; ")
		}
		return "", fmt.Errorf("compare: instruction counts are comparable only under one valgrind version and one set of settings: base has %s, head has %s; measure both sides again with the same valgrind (--measure instructions)", say(b), say(h))
	}
	return fmt.Sprintf("measured by instructions: %s decides (with write-amp and job-allocs/op), each judged unpaired by Welch's t-test on the logs (counts have no round-to-round common noise); each job's window (first barrier to last commit) counted under callgrind (%s), Pebble's memtable skiplist apart (%s, not judged). Wall-clock figures of these runs (under valgrind, one P, 20–50× slower) are in metrics.txt, not judged",
		contract.UnitInstrPerRow, b[0], contract.UnitSkiplistPerRow), nil
}
