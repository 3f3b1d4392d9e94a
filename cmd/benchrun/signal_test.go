package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/contract"
)

// TestSIGTERMStopsCleanly sends SIGTERM to `benchrun run` once a job has finished:
// it exits non-zero saying it was interrupted, leaves no bench process, temporary
// binary or partial trace, and keeps the finished results as valid benchfmt.
func TestSIGTERMStopsCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds benchrun and the bench binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "benchrun")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "out")
	cmd := exec.Command(bin, "run", "--src", "../..", "--out", out, "--rows", "20000", "--barrier", "200rows", "--count", "50", "--no-plots")
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if data, err := os.ReadFile(filepath.Join(out, "results.txt")); err == nil && strings.Contains(string(data), "Benchmark") {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no result after 3 minutes:\n%s", log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if x, ok := err.(*exec.ExitError); !ok || x.ExitCode() != 1 || !strings.Contains(log.String(), "interrupted after") {
		t.Fatalf("exit %v, want 1 and 'interrupted after':\n%s", err, log.String())
	}
	if leftovers, _ := filepath.Glob(filepath.Join(out, "traces", "*.tmp")); len(leftovers) > 0 {
		t.Errorf("partial traces left: %v", leftovers)
	}
	if _, err := os.Stat(filepath.Join(out, "bench.test")); err == nil {
		t.Error("the temporary bench binary was left behind")
	}
	if procs, _ := exec.Command("pgrep", "-f", filepath.Join(out, "bench.test")).Output(); len(procs) > 0 {
		t.Errorf("bench processes left: %s", procs)
	}
	results, _, err := contract.ReadFiles(filepath.Join(out, "results.txt"))
	if err != nil || len(results) == 0 {
		t.Errorf("finished results: %d, %v", len(results), err)
	}
}
