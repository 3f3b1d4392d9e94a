package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/contract"
)

// RawCopy is a raw copy to run beside the cells: one table of one profile.
type RawCopy struct {
	Profile, Workload string
	Rows              int64
}

// Name is the raw copy's benchmark name, as BenchmarkRawCopy reports it.
func (r RawCopy) Name() string {
	return fmt.Sprintf("RawCopy/profile=%s/workload=%s/rows=%d", r.Profile, r.Workload, r.Rows)
}

// RawCopiesOf are the distinct tables of the cells, in their order.
func RawCopiesOf(cells []contract.Cell) []RawCopy {
	var out []RawCopy
	for _, c := range cells {
		r := RawCopy{c.Profile, c.Workload, c.Rows}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// args run exactly this raw copy once.
func (r RawCopy) args(profileFiles []string) []string {
	bench := "^BenchmarkRawCopy$"
	for _, p := range strings.Split(strings.TrimPrefix(r.Name(), "RawCopy/"), "/") {
		bench += "/^" + regexp.QuoteMeta(p) + "$"
	}
	args := []string{"-test.run", "^$", "-test.bench", bench, "-profile", r.Profile, "-workload", r.Workload,
		"-rows", strconv.FormatInt(r.Rows, 10), "-test.benchtime", "1x", "-test.count", "1"}
	if len(profileFiles) > 0 {
		args = append(args, "-"+contract.FlagProfileFile, strings.Join(profileFiles, ","))
	}
	return args
}

// RunRawCopies runs each raw copy count times on the side's binary, round by round
// (the raw copy is the reference the cells are read against, so it runs after
// them, not interleaved), and returns their results with the harness's config and
// a line per copy that failed.
func RunRawCopies(ctx context.Context, cfg PassConfig, s Side, copies []RawCopy, count int) ([]*benchfmt.Result, []string) {
	var results []*benchfmt.Result
	var failed []string
	for round := 1; round <= count; round++ {
		for _, rc := range copies {
			if ctx.Err() != nil {
				return results, append(failed, "interrupted")
			}
			prof, err := cfg.Profiles.Get(rc.Profile)
			if err != nil {
				failed = append(failed, fmt.Sprintf("%s: %v", rc.Name(), err))
				continue
			}
			rctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
			cmd := exec.CommandContext(rctx, s.Binary, rc.args(cfg.ProfileFiles)...)
			cmd.Dir = cfg.Dir
			cmd.Env = os.Environ()
			if prof.CPUs > 0 {
				cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(prof.CPUs))
			}
			gracefully(cmd, 5*time.Second)
			var stdout bytes.Buffer
			cmd.Stdout = &stdout
			err = cmd.Run()
			cancel()
			if err != nil {
				failed = append(failed, fmt.Sprintf("%s round %d: %v", rc.Name(), round, err))
				continue
			}
			found := false
			r := benchfmt.NewReader(bytes.NewReader(stdout.Bytes()), rc.Name())
			for r.Scan() {
				if res, ok := r.Result().(*benchfmt.Result); ok && contract.Label(string(res.Name)) == rc.Name() {
					res = res.Clone()
					addConfig(res, s.Checkout, cfg.Machine, prof)
					results = append(results, res)
					found = true
				}
			}
			if !found {
				failed = append(failed, fmt.Sprintf("%s round %d: no result in the output", rc.Name(), round))
			}
		}
	}
	return results, failed
}
