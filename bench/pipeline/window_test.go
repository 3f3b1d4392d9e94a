package pipeline

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/internal/callgrind"
	"github.com/backfill-bench/backfill-bench/internal/extrawork"
)

// windowJob is the small job TestInstructionWindow counts: work-driven barriers and
// changes, so every run does the same work.
func windowJob() Config {
	cfg := Default()
	cfg.Rows = 10_000
	cfg.Persist = true
	cfg.BarrierRows = 1_000
	cfg.ChangesPerEpoch = 50
	cfg.SettleWait = 100 * time.Millisecond
	return cfg
}

// TestInstructionWindowChild is the process TestInstructionWindow runs under
// callgrind, in a build with extra work (tag instrtest): the job, or, with
// WINDOW_CALIBRATE=n, n calls of the per-row extra work alone in a window. It
// prints the job's snapshot rows.
func TestInstructionWindowChild(t *testing.T) {
	if os.Getenv("WINDOW_CHILD") == "" {
		t.Skip("run by TestInstructionWindow")
	}
	if n, _ := strconv.Atoi(os.Getenv("WINDOW_CALIBRATE")); n > 0 {
		w := openWindow()
		for range n {
			extrawork.Row()
		}
		w.Stop()
		return
	}
	res, _ := runJob(t, windowJob())
	fmt.Printf("snapshot-rows %d\n", res.SnapshotRows)
}

// TestInstructionWindow shows, under callgrind, that a job's window holds the job
// and nothing else: extra work in loading A or in verifying the MV leaves its count
// as it was (within the run-to-run noise), and extra work per snapshot row moves it
// by that work (within 10 %), as measured on its own.
func TestInstructionWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four jobs under valgrind (1–2 min on a busy 2-core machine)")
	}
	if _, err := callgrind.Check(context.Background()); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "pipeline.test")
	build := exec.Command("go", "test", "-c", "-tags", "instrtest", "-o", bin, ".")
	if msg, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", build, err, msg)
	}
	run := func(i int, env ...string) (instructions uint64, rows int64) {
		out := filepath.Join(dir, fmt.Sprintf("callgrind.%d.out", i))
		cmd := exec.Command("valgrind", callgrind.Command(out, bin, []string{"-test.run", "^TestInstructionWindowChild$"})...)
		cmd.Env = append(append(os.Environ(), callgrind.Env()...), append(env, "WINDOW_CHILD=1")...)
		msg, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%v: %v\n%s", env, err, msg)
			return 0, 0
		}
		for _, l := range strings.Split(string(msg), "\n") {
			if v, ok := strings.CutPrefix(l, "snapshot-rows "); ok {
				rows, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		n, windows, err := callgrind.ReadWindows(out)
		if err != nil || windows != 1 {
			t.Errorf("%v: %d windows, %v", env, windows, err)
		}
		return n, rows
	}
	// Each run starts the test binary under valgrind (~5–10 s before the job):
	// four runs, two at a time.
	const rowSteps, bigSteps = 1000, 5_000_000
	envs := [][]string{
		nil,
		{extrawork.EnvLoad + "=" + strconv.Itoa(bigSteps), extrawork.EnvVerify + "=" + strconv.Itoa(bigSteps)},
		{extrawork.EnvRow + "=" + strconv.Itoa(rowSteps)},
		{extrawork.EnvRow + "=" + strconv.Itoa(rowSteps), "WINDOW_CALIBRATE=" + strconv.FormatInt(windowJob().Rows, 10)},
	}
	counts, rows := make([]uint64, len(envs)), make([]int64, len(envs))
	var wg sync.WaitGroup
	slots := make(chan struct{}, 2)
	for i, env := range envs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			counts[i], rows[i] = run(i, env...)
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	base, outside, perRow, calib := counts[0], counts[1], counts[2], counts[3]
	if rows[0] < windowJob().Rows || rows[1] != rows[0] || rows[2] != rows[0] {
		t.Fatalf("snapshot rows %v: want the same in every job, at least the %d of A", rows[:3], windowJob().Rows)
	}
	n := float64(rows[0])
	rel := func(c uint64) float64 { return float64(c)/float64(base) - 1 }
	t.Logf("window: %d instructions (%.0f/row); with extra work in load and verification %+.2f %%; with %d steps/row %+.2f %%",
		base, float64(base)/n, 100*rel(outside), rowSteps, 100*rel(perRow))
	// 2×5 M steps are ~120 M instructions, ~80 % of the window: in it, they could
	// not hide in the run-to-run noise (1–3 % between two runs of this small job,
	// mostly Pebble's randomly seeded skiplist and the scans' overlay of sealed epochs).
	if math.Abs(rel(outside)) > 0.10 {
		t.Errorf("extra work in loading A and verifying the MV moved the window's count %+.2f %%: want within the noise (10 %%, against +80 %% were it counted)", 100*rel(outside))
	}
	want, got := float64(calib)/float64(windowJob().Rows), (float64(perRow)-float64(base))/n
	t.Logf("per-row work: %.1f instructions/row alone, %.1f in the job", want, got)
	if math.Abs(got/want-1) > 0.10 {
		t.Errorf("%d xorshift steps per row cost %.1f instructions/row alone but moved the job's instructions/row by %.1f: off by more than 10 %%", rowSteps, want, got)
	}
}
