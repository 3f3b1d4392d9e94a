package fit

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backfill-bench/backfill-bench/harness/costmodel"
	"github.com/backfill-bench/backfill-bench/internal/usage"
)

// writeSweep writes a results file of a synthetic sweep: four sizes, two epoch
// sizes, persist off and on, three runs each, with times from known costs.
func writeSweep(t *testing.T, extra string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("Unit barriers assume=exact\n")
	i := 0
	for _, rows := range []int64{100_000, 300_000, 1_000_000, 3_000_000} {
		for _, per := range []int64{5000, 50000} {
			for _, persist := range []string{"off", "on"} {
				for range 3 {
					i++
					epochs := float64(rows / per)
					sec := 4e-7*float64(rows) + 5e-8*float64(rows)*math.Log10(float64(rows)) + 2e-3*epochs
					if persist == "on" {
						sec += 5e-4 * epochs
					}
					sec *= 1 + 0.01*math.Sin(float64(i)) // deterministic noise
					fmt.Fprintf(&b, "BenchmarkBackfill/profile=mem/workload=narrow/rows=%d/persist=%s/scan=merged/barrier=%drows/par=2-2 1 %.0f ns/op %.0f barriers %.0f rows/s 1.1 write-amp\n",
						rows, persist, per, sec*1e9, epochs-2, float64(rows)/sec)
				}
			}
		}
	}
	for _, rows := range []int64{100_000, 3_000_000} {
		fmt.Fprintf(&b, "BenchmarkRawCopy/profile=mem/workload=narrow/rows=%d-2 1 1 ns/op 3000000 rows/s\n", rows)
	}
	b.WriteString(extra)
	path := filepath.Join(t.TempDir(), "sweep.txt")
	os.WriteFile(path, []byte(b.String()), 0o644)
	return path
}

// TestFitAndPredict: fit reads a sweep's results and saves the model, and divides
// the cells by the baselines the results hold; predict
// gives a 10⁸-row job at 1 s barriers and its persistence overhead, and refuses
// a model file that is not one and a job beyond what the model covers; results of
// two configurations, or measured two ways, are refused.
func TestFitAndPredict(t *testing.T) {
	model := filepath.Join(t.TempDir(), "model.json")
	var out strings.Builder
	if err := Fit(&out, []string{writeSweep(t, "")}, model); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".png", ".svg"} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(model), "scale"+ext)); err != nil {
			t.Errorf("no scale plot: %v", err)
		}
	}
	if !strings.Contains(out.String(), "model of profile=mem/workload=narrow/scan=merged/par=2: 48 jobs") || !strings.Contains(out.String(), "per-persisted-epoch") ||
		!strings.Contains(out.String(), "held out: fitted on 100000 to 1e+06 rows, predicting 3e+06 rows") || strings.Count(out.String(), ", holds") != 4 ||
		!strings.Contains(out.String(), "÷ append-order copy") {
		t.Errorf("fit summary:\n%s", out.String())
	}
	out.Reset()
	if err := Predict(&out, model, queryOf(1e8, 1, true), 2); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "rows/s") || !strings.Contains(out.String(), "persistence overhead +") {
		t.Errorf("prediction:\n%s", out.String())
	}
	if err := Predict(&out, model, queryOf(1e14, 1, false), 0); err == nil {
		t.Error("predicted 10¹⁴ rows")
	}
	if err := Predict(&out, model, queryOf(1e8, 1, false), 8); err == nil || !strings.Contains(err.Error(), "fit results of par=8") {
		t.Errorf("par 8 from a model of par 2: err = %v", err)
	}
	if err := Predict(&out, writeSweep(t, ""), queryOf(1e8, 1, false), 0); err == nil {
		t.Error("read a results file as a model")
	}
	mixed := writeSweep(t, "BenchmarkBackfill/profile=gp3/workload=narrow/rows=1000/persist=off/scan=merged/barrier=500rows/par=2-2 1 1000000 ns/op 0 barriers\n")
	if err := Fit(&out, []string{mixed}, model); err == nil || !strings.Contains(err.Error(), "two configurations") {
		t.Errorf("mixed profiles: err = %v", err)
	}
	duets := writeSweep(t, "pairing: duet\nBenchmarkBackfill/profile=mem/workload=narrow/rows=100000/persist=off/scan=merged/barrier=5000rows/par=2 1 1000000 ns/op 18 barriers\n")
	if err := Fit(&out, []string{duets}, model); err == nil || !strings.Contains(err.Error(), "measured two ways") {
		t.Errorf("duets mixed with jobs alone: err = %v", err)
	}
}

func queryOf(rows, barrierSec float64, persist bool) costmodel.Query {
	return costmodel.Query{Rows: rows, Barrier: barrierSec, Persist: persist}
}

// TestFitSavesBesideResults: without --out the model goes to model.json in the
// first results file's directory, its plots beside it; a second fit replaces an
// earlier model, but a file in the way that is not a model is refused, naming
// --out, and left as it was.
func TestFitSavesBesideResults(t *testing.T) {
	for _, tc := range []struct {
		name    string
		before  string // model.json before the fit: "" none, "model" an earlier fit's, else this text
		out     string // --out: "" the default, "results" the results file itself
		refused bool
	}{
		{"beside the results", "", "", false},
		{"an earlier model replaced", "model", "", false},
		{"a JSON file that is not a model", `{"notes": "mine"}`, "", true},
		{"a text file", "hello\n", "", true},
		{"--out naming the results", "", "results", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			results := writeSweep(t, "")
			dir := filepath.Dir(results)
			model := filepath.Join(dir, "model.json")
			var out strings.Builder
			switch tc.before {
			case "":
			case "model":
				if err := Fit(&out, []string{results}, ""); err != nil {
					t.Fatal(err)
				}
				os.Remove(filepath.Join(dir, "scale.png"))
			default:
				os.WriteFile(model, []byte(tc.before), 0o644)
			}
			flagOut, guarded := "", model
			if tc.out == "results" {
				flagOut, guarded = results, results
			}
			before, _ := os.ReadFile(guarded)
			err := Fit(&out, []string{results}, flagOut)
			if tc.refused {
				var ce *usage.Error
				if !errors.As(err, &ce) || !strings.Contains(err.Error(), guarded+" exists and is not a model") || !strings.Contains(err.Error(), "--out") {
					t.Errorf("err = %v, want a ConfigError naming %s and --out", err, guarded)
				}
				if after, _ := os.ReadFile(guarded); string(after) != string(before) {
					t.Errorf("%s changed though the fit was refused", guarded)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := readModel(model); err != nil {
				t.Errorf("no model beside the results: %v", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "scale.png")); err != nil {
				t.Errorf("no scale plot beside the model: %v", err)
			}
			if _, err := os.Stat("model.json"); err == nil {
				t.Error("a model.json appeared in the current directory")
			}
		})
	}
}
