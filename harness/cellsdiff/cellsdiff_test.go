package cellsdiff_test

import (
	"github.com/backfill-bench/backfill-bench/harness"
	"github.com/backfill-bench/backfill-bench/harness/cellsdiff"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCellsFromDiff: the shipped rules parse; a change to the per-vnode iterator
// adds the per-vnode scan, one under bench/storage/ adds gp3 and the checkpoint read,
// a change elsewhere adds nothing; a rule naming an unknown dimension is refused.
func TestCellsFromDiff(t *testing.T) {
	rules := filepath.Join("..", "..", "ci", "cells-by-path.json")
	for _, tc := range []struct {
		changed []string
		want    map[string]string // dimension: its values after
		notes   int
	}{
		{[]string{"README.md", "harness/site.go"}, map[string]string{"scan": "snapshot", "profile": "mem,hummock", "read": "uncommitted"}, 0},
		{[]string{"bench/scaniter/vnodeiter.go"}, map[string]string{"scan": "snapshot,per-vnode", "profile": "mem,hummock"}, 1},
		{[]string{"bench/storage/store.go"}, map[string]string{"profile": "mem,hummock,gp3", "read": "uncommitted,checkpoint", "scan": "snapshot,merged"}, 3},
		{[]string{"workloads/catalog.go", "bench/source/source.go"}, map[string]string{"workload": "narrow,bid,narrow+pk-update"}, 1},
	} {
		m := harness.QuickMatrix()
		notes, err := cellsdiff.Add(&m, rules, tc.changed)
		if err != nil {
			t.Fatal(err)
		}
		for dim, want := range tc.want {
			if got := m.Get(dim); got != want {
				t.Errorf("%v: %s = %s, want %s", tc.changed, dim, got, want)
			}
		}
		if len(notes) != tc.notes {
			t.Errorf("%v: notes %q, want %d", tc.changed, notes, tc.notes)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`[{"paths": ["x"], "add": {"colour": "blue"}, "why": "?"}]`), 0o644)
	m := harness.QuickMatrix()
	if _, err := cellsdiff.Add(&m, bad, []string{"x"}); err == nil || !strings.Contains(err.Error(), "colour") {
		t.Errorf("an unknown dimension: err = %v", err)
	}
	os.WriteFile(bad, []byte(`{"not": "a list"}`), 0o644)
	if _, err := cellsdiff.Add(&m, bad, nil); err == nil {
		t.Error("a file that is not a list of rules parsed")
	}
}
