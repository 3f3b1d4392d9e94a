package main

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/contracttest"
	"github.com/backfill-bench/backfill-bench/harness"
)

// TestNewDimensionIsAFlag: a dimension added to the contract's table is a flag of
// benchrun's run, compare and nightly, checked by its parser, and applied to the
// matrix.
func TestNewDimensionIsAFlag(t *testing.T) {
	contracttest.Colour(t)
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var m harness.Measure
	given := bindMatrix(fs, &m)
	if f := fs.Lookup("colour"); f == nil || !strings.Contains(f.Usage, "test colours") {
		t.Fatalf("no --colour flag: %+v", f)
	}
	if err := fs.Parse([]string{"--colour", "green"}); err == nil || !strings.Contains(err.Error(), "want red or blue") {
		t.Errorf("--colour green: %v", err)
	}
	if err := fs.Parse([]string{"--colour", "blue,red"}); err != nil {
		t.Fatal(err)
	}
	var mx contract.Matrix
	given.apply(&mx)
	if got := mx.Get("colour"); got != "blue,red" {
		t.Errorf("matrix colour %q, want blue,red", got)
	}
}
