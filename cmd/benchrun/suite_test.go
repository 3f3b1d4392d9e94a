package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/harness"
	"github.com/backfill-bench/backfill-bench/harness/runner"
)

// TestNightlyHonoursProfileFile: a nightly profile of --profile-file joins the
// nightly matrix, and named alone it has the recoveries, in benchrun nightly as in
// run --matrix nightly.
func TestNightlyHonoursProfileFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "night.json")
	if err := os.WriteFile(file, []byte(`{"name": "night-mem", "version": 1, "description": "a nightly profile of a file", "fs": "mem", "nightly": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  func(args ...string) (harness.RunConfig, error)
	}{
		{"nightly", func(args ...string) (harness.RunConfig, error) {
			c, err := nightlyConfig(io.Discard, io.Discard, append([]string{"--profile-file", file}, args...))
			return c.Run, err
		}},
		{"run --matrix nightly", func(args ...string) (harness.RunConfig, error) {
			return runConfig(io.Discard, io.Discard, append([]string{"--matrix", "nightly", "--profile-file", file}, args...))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := tc.cfg()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(cfg.Matrix.Profiles, "night-mem") {
				t.Errorf("nightly profiles %v: want the file's night-mem too", cfg.Matrix.Profiles)
			}
			if cfg, err = tc.cfg("--profile", "night-mem"); err != nil {
				t.Fatal(err)
			}
			if len(cfg.Recoveries) == 0 || slices.ContainsFunc(cfg.Recoveries, func(r runner.Recovery) bool { return r.Cell.Profile != "night-mem" }) {
				t.Errorf("--profile night-mem: recoveries %v, want night-mem's (an in-memory nightly profile)", cfg.Recoveries)
			}
		})
	}
}

// TestSuiteThenFlags: a command takes its suite's defaults, and a flag given wins
// over its suite's value.
func TestSuiteThenFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		count   int
		timeout time.Duration
		pairing string
		rawCopy bool
		rows    int64 // the matrix's first table size
	}{
		{nil, harness.QuickCount, runner.DefaultTimeout, "", false, harness.QuickMatrix().Rows[0]},
		{[]string{"--measure", "instructions"}, harness.InstructionCount, runner.DefaultTimeout, "", false, harness.InstructionMatrix().Rows[0]},
		{[]string{"--matrix", "scale"}, harness.ScaleCount, runner.DefaultTimeout, "sequential", true, harness.ScaleMatrix().Rows[0]},
		{[]string{"--matrix", "scale", "--count", "2", "--timeout", "1m", "--pairing", "duet", "--raw-copy=false", "--rows", "1000"}, 2, time.Minute, "duet", false, 1000},
		{[]string{"--matrix", "nightly", "--count", "3"}, 3, runner.DefaultTimeout, "sequential", false, harness.QuickMatrix().Rows[0]},
		{[]string{"--matrix", "pr"}, harness.PRSuite().Count, runner.DefaultTimeout, "", false, harness.QuickMatrix().Rows[0]},
		{[]string{"--matrix", "instructions"}, harness.InstructionCount, runner.DefaultTimeout, "", false, harness.InstructionMatrix().Rows[0]},
	} {
		cfg, err := runConfig(io.Discard, io.Discard, tc.args)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if cfg.Count != tc.count || cfg.Timeout != tc.timeout || cfg.Pairing != tc.pairing || cfg.RawCopy != tc.rawCopy || cfg.Matrix.Rows[0] != tc.rows {
			t.Errorf("%q: count %d, timeout %v, pairing %q, raw copy %v, rows %d; want %d, %v, %q, %v, %d",
				tc.args, cfg.Count, cfg.Timeout, cfg.Pairing, cfg.RawCopy, cfg.Matrix.Rows[0], tc.count, tc.timeout, tc.pairing, tc.rawCopy, tc.rows)
		}
	}
	if _, err := runConfig(io.Discard, io.Discard, []string{"--matrix", "huge"}); exitCode(err) != 2 {
		t.Errorf("--matrix huge: %v, want a usage error", err)
	}
}

// TestSuitesHoldEveryDefault: every suite names its matrix, rounds, timeout and
// statistics, with one timeout and one alpha among them.
func TestSuitesHoldEveryDefault(t *testing.T) {
	for _, s := range harness.Suites() {
		if s.Matrix == nil || s.Count < 1 || s.Timeout != runner.DefaultTimeout || s.Alpha <= 0 || s.Alpha >= 1 || s.Thresholds == nil || s.Correction == "" {
			t.Errorf("suite %s: %+v: want a matrix, rounds, DefaultTimeout and statistics", s.Name, s)
		}
		if got, err := harness.SuiteNamed(s.Name); err != nil || got.Name != s.Name {
			t.Errorf("SuiteNamed(%q) = %v, %v", s.Name, got.Name, err)
		}
	}
}
