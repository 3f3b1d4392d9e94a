package harness

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/history"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/workloads"
)

func nightlyConfig(results, hist string) NightlyConfig {
	cfg := NightlyConfig{Results: results, History: hist, Run: RunConfig{Output: Output{Stdout: io.Discard}}}
	cfg.Analysis.Options = judge.Options{Thresholds: judge.DefaultThresholds(), Correction: judge.Holm, Alpha: 0.05}
	return cfg
}

// TestNightlyRecordsEveryNight: two records in one second are two nights, and a
// broken night already in the history is skipped, not fatal.
func TestNightlyRecordsEveryNight(t *testing.T) {
	hist := t.TempDir()
	fixture := filepath.Join(compareFixture, "base.txt")
	for range 2 {
		if _, err := Nightly(t.Context(), nightlyConfig(fixture, hist)); err != nil {
			t.Fatal(err)
		}
	}
	machines, _ := filepath.Glob(filepath.Join(hist, "*"))
	if len(machines) != 1 {
		t.Fatalf("machines %v", machines)
	}
	nights, _ := filepath.Glob(filepath.Join(machines[0], "*", "results.txt"))
	if len(nights) != 2 {
		t.Fatalf("nights %v, want 2", nights)
	}
	// Break one night: the next record goes on, naming it.
	os.WriteFile(nights[0], []byte("BenchmarkX 1 NaN ns/op\n"), 0o644)
	_, skipped, err := history.Load(hist, filepath.Base(machines[0]))
	if err != nil || len(skipped) != 1 || !strings.Contains(skipped[0], "not a finite number") {
		t.Errorf("Load: skipped %q, err %v", skipped, err)
	}
	rep, err := Nightly(t.Context(), nightlyConfig(fixture, hist))
	if err != nil || rep.Nights != 2 {
		t.Errorf("after a broken night: %v nights, err %v; want the good one and the new one", rep, err)
	}
}

// TestNightlyRefusesMixedMachines: results of two machines are not one night.
func TestNightlyRefusesMixedMachines(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(compareFixture, "base.txt"))
	if err != nil {
		t.Fatal(err)
	}
	other := strings.Replace(string(data), "machine: abc123", "machine: fff999", 1)
	mixed := filepath.Join(t.TempDir(), "mixed.txt")
	os.WriteFile(mixed, append(data, []byte("\n"+other)...), 0o644)
	hist := t.TempDir()
	var ce *ConfigError
	if _, err := Nightly(t.Context(), nightlyConfig(mixed, hist)); !errors.As(err, &ce) || !strings.Contains(err.Error(), "abc123, fff999") {
		t.Errorf("err = %v, want both fingerprints named", err)
	}
	if entries, _ := os.ReadDir(hist); len(entries) != 0 {
		t.Errorf("a refused night left %d entries in the history", len(entries))
	}
}

// TestNightlyFirstNightHasTrends: the first night of a new history draws its trend.
func TestNightlyFirstNightHasTrends(t *testing.T) {
	hist := t.TempDir()
	rep, err := Nightly(t.Context(), nightlyConfig(filepath.Join(compareFixture, "base.txt"), hist))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(rep.Dir, "trends-mem.png")); err != nil {
		t.Error(err)
	}
}

// TestNightlyMatrixCoversCompositeKeys: every night runs every scan on a workload
// whose primary key has several columns, one descending, and whose distribution
// key is a strict prefix of it.
func TestNightlyMatrixCoversCompositeKeys(t *testing.T) {
	profiles, err := profile.NewSet(nil)
	if err != nil {
		t.Fatal(err)
	}
	m := NightlyMatrix(profiles)
	if !slices.Equal(m.Scans, contract.Scans) {
		t.Errorf("nightly scans %v, want every scan %v", m.Scans, contract.Scans)
	}
	composite := false
	for _, name := range m.Workloads {
		w, err := workloads.Parse(name, 1)
		if err != nil {
			t.Fatal(err)
		}
		s := w.Schema()
		if len(s.PK) > 1 && slices.Contains(s.PKDesc, true) && len(s.DistKey) < len(s.PK) && slices.Equal(s.DistKey, s.PK[:len(s.DistKey)]) {
			composite = true
		}
	}
	if !composite {
		t.Errorf("nightly workloads %v: none has a composite key with a descending column and a prefix distribution key", m.Workloads)
	}
}
