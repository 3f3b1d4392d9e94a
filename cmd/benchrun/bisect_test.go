package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBisectAndCommentExitCodes: bisect's errors are usage errors (2), except with
// --step, where git bisect run would read any status from 1 to 127 but 125 as
// "bad": there every error is 128, which aborts the bisect. comment refuses a bad
// verdict.json with 2, writing nothing.
func TestBisectAndCommentExitCodes(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "verdict.json")
	os.WriteFile(bad, []byte(`{"verdict":"✓ no regression"}`), 0o644)
	out := filepath.Join(t.TempDir(), "comment.md")
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"bisect"}, 2, "want GOOD BAD"},
		{[]string{"bisect", "HEAD~1", "HEAD"}, 2, "--cell is required"},
		{[]string{"bisect", "HEAD~1", "HEAD", "--cell", "("}, 2, "neither a cell's name nor a regular expression"},
		{[]string{"bisect", "no-such-ref-xyz", "HEAD", "--cell", "."}, 2, "bisect GOOD"},
		{[]string{"bisect", "--step"}, 128, "want GOOD BAD (or GOOD with --step)"},
		{[]string{"bisect", "--step", "no-such-ref-xyz", "--cell", "."}, 128, "bisect GOOD"},
		{[]string{"bisect", "--step", "HEAD~1", "--cell", "workload=nope"}, 128, "matches none"},
		{[]string{"bisect", "--step", "HEAD~1", "--cell", ".", "--nope"}, 128, "flag provided but not defined"},
		{[]string{"comment", "--out", out}, 2, "--verdict and --out are required"},
		{[]string{"comment", "--verdict", bad, "--out", out}, 2, "unknown field"},
		{[]string{"comment", "--verdict", bad, "--out", out, "--run-url", "javascript:alert(1)"}, 2, "want an https URL"},
	} {
		_, stderr, err := runArgs(tc.args...)
		if exitCode(err) != tc.code || err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%q: exit %d (%v), want %d and %q\n%s", tc.args, exitCode(err), err, tc.code, tc.msg, stderr)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused verdict.json left a comment")
	}
}
