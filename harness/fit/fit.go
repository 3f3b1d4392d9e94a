// Package fit fits the cost model to results files (benchrun fit) and predicts
// jobs with it (benchrun predict).
package fit

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/costmodel"
	"github.com/backfill-bench/backfill-bench/harness/render"
	"github.com/backfill-bench/backfill-bench/internal/files"
	"github.com/backfill-bench/backfill-bench/internal/usage"
)

// modelFile is what `benchrun fit` saves: the model and the cells it is for.
type modelFile struct {
	Model *costmodel.Model `json:"model"`
	// The configuration every fitted job shared (profile, workload, scan, par…):
	// the model predicts for it only.
	Config string   `json:"config"`
	Files  []string `json:"files"`
	// The held-out check: a model of the smaller sizes predicting the largest.
	HeldOut []costmodel.Check `json:"held_out,omitempty"`
}

// jobsOf turns backfill results into the model's jobs: rows, epochs (the regular
// barriers plus the first and the final), persistence and wall time. Every result
// must share one configuration besides rows, barrier and persistence.
func jobsOf(results []*benchfmt.Result, names []string) ([]costmodel.Job, string, error) {
	var jobs []costmodel.Job
	config, measured := "", ""
	for _, r := range results {
		c, ok := contract.CellOf(r)
		if !ok {
			continue
		}
		// The cell's name without the dimensions the model spans.
		if key := c.Without("rows", "barrier", "persist", "vnodes"); config == "" {
			config = key
		} else if key != config {
			return nil, "", &usage.Error{Err: fmt.Errorf("fit: results of two configurations (%s and %s): a model is for one profile, workload, scan and par; fit each apart", config, key)}
		}
		// Jobs measured in duets (on half the CPUs, beside another) and alone do not mix.
		if how := "pairing " + cmp.Or(r.GetConfig(contract.ConfigPairing), "sequential") + ", gomaxprocs " + r.GetConfig(contract.ConfigGOMAXPROCS); measured == "" {
			measured = how
		} else if how != measured {
			return nil, "", &usage.Error{Err: fmt.Errorf("fit: results measured two ways (%s and %s): fit each apart", measured, how)}
		}
		sec, okSec := r.Value("sec/op")
		barriers, okB := r.Value(contract.UnitBarriers)
		if !okSec || !okB {
			continue
		}
		jobs = append(jobs, costmodel.Job{Rows: float64(c.Rows), Epochs: barriers + 2, Vnodes: float64(c.VnodeCount()), Persist: c.Persist, Seconds: sec,
			Barrier: c.Barrier.Interval.Seconds(), EpochRows: float64(c.Barrier.Rows)})
	}
	if len(jobs) == 0 {
		return nil, "", &usage.Error{Err: fmt.Errorf("fit: no backfill results with sec/op and barriers in %s", strings.Join(names, ", "))}
	}
	return jobs, config, nil
}

// Fit fits the cost model to results files and saves it to out (JSON; "":
// model.json beside the first file, so the model stays with its results); it
// writes a summary of the coefficients with their 95 % intervals to w, and draws
// the results against size (scale.png and .svg beside out). It replaces an
// earlier model at out, nothing else.
func Fit(w io.Writer, names []string, out string) error {
	if len(names) == 0 {
		return &usage.Error{Err: fmt.Errorf("fit: want results files")}
	}
	if out == "" {
		out = filepath.Join(filepath.Dir(names[0]), "model.json")
	}
	if _, err := os.Stat(out); err == nil {
		if _, err := readModel(out); err != nil {
			return &usage.Error{Err: fmt.Errorf("fit: %s exists and is not a model benchrun fit wrote: name another file with --out", out)}
		}
	}
	results, _, err := contract.ReadFiles(names...)
	if err != nil {
		return &usage.Error{Err: fmt.Errorf("fit: %w", err)}
	}
	jobs, config, err := jobsOf(results, names)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("fit: --out: %w", err)
	}
	plotBase := filepath.Join(filepath.Dir(out), "scale")
	drawn, err := render.PlotScale(results, config, plotBase)
	if err != nil {
		return err
	}
	m, err := costmodel.Fit(jobs, 1000, 1)
	if err != nil {
		return &usage.Error{Err: err}
	}
	mf := modelFile{Model: m, Config: config, Files: names}
	trained, checks, holdErr := costmodel.HoldOut(jobs, 300, 2)
	if holdErr == nil {
		mf.HeldOut = checks
	}
	data, err := json.MarshalIndent(mf, "", "  ")
	if err != nil {
		return err
	}
	if err := files.WriteAtomic(out, data); err != nil {
		return err
	}
	fmt.Fprintf(w, "model of %s: %d jobs, %g to %g rows\n", config, m.Jobs, m.MinRows, m.MaxRows)
	for k, n := range costmodel.Names {
		switch {
		case k == 3 && !(m.Persist[0] && m.Persist[1]):
			fmt.Fprintf(w, "  %-26s not fitted: the results have one persistence mode\n", n)
		case k == 4 && len(m.Vnodes) < 2:
			fmt.Fprintf(w, "  %-26s not fitted: the results have one vnode count (part of per-epoch)\n", n)
		case k == 5 && m.Sizes < costmodel.MinSizesForGrowth:
			fmt.Fprintf(w, "  %-26s not fitted: the results have %d table sizes, fewer than %d\n", n, m.Sizes, costmodel.MinSizesForGrowth)
		default:
			fmt.Fprintf(w, "  %-26s %.4g s [%.4g, %.4g]\n", n, m.Coef[k], m.Lo[k], m.Hi[k])
		}
	}
	writeHeldOut(w, trained, checks, holdErr)
	if _, err := render.WriteBaselines(w, results); err != nil {
		return err
	}
	if drawn {
		fmt.Fprintf(w, "plots: %s.png %s.svg\n", plotBase, plotBase)
	}
	return nil
}

// writeHeldOut says how the model of the smaller sizes predicted the largest, and
// plainly where it does not hold.
func writeHeldOut(w io.Writer, trained [2]float64, checks []costmodel.Check, err error) {
	if err != nil {
		fmt.Fprintf(w, "held out: not checked: %v\n", err)
		return
	}
	fmt.Fprintf(w, "held out: fitted on %g to %g rows, predicting %g rows (it holds within ±%.0f %%):\n",
		trained[0], trained[1], checks[0].Rows, 100*costmodel.Tolerance)
	failed := 0
	for _, c := range checks {
		barrier := fmt.Sprintf("%gs", c.Barrier)
		if c.EpochRows > 0 {
			barrier = fmt.Sprintf("%grows", c.EpochRows)
		}
		label := fmt.Sprintf("barrier=%s persist=%s vnodes=%g", barrier, contract.OnOff(c.Persist), vnodeCount(c.Vnodes))
		if c.Refused != "" {
			failed++
			fmt.Fprintf(w, "  %-40s measured %.4g s (%d jobs), no prediction: %s\n", label, c.Measured, c.Jobs, c.Refused)
			continue
		}
		verdict := "holds"
		if !c.Holds {
			failed++
			verdict = "DOES NOT HOLD"
		}
		fmt.Fprintf(w, "  %-40s measured %.4g s (%d jobs), predicted %.4g s [%.4g, %.4g]: %+.0f %%, %s\n",
			label, c.Measured, c.Jobs, c.Predicted, c.PredLo, c.PredHi, 100*c.Error, verdict)
	}
	if failed > 0 {
		fmt.Fprintf(w, "  the model does not hold for %d of %d configurations at %g rows: read its predictions beyond the measured sizes as rough\n", failed, len(checks), checks[0].Rows)
	}
}

// Predict prints the model's prediction for q: time, rows/s and epochs with their
// intervals, and, for persist=on, the overhead against persist=off when the model
// has both.
// A model is of one par (its configuration names it): par > 0 must be that one.
func Predict(w io.Writer, modelPath string, q costmodel.Query, par int) error {
	mf, err := readModel(modelPath)
	if err != nil {
		return &usage.Error{Err: fmt.Errorf("predict: --model: %w", err)}
	}
	if par > 0 && !slices.Contains(contract.Fields(mf.Config), contract.Field{Dim: "par", Value: strconv.Itoa(par)}) {
		return &usage.Error{Err: fmt.Errorf("predict: --par %d: the model is of %s; fit results of par=%d to predict it (the cost does not scale with actors beyond the cores: see the sweep's par cells)", par, mf.Config, par)}
	}
	p, err := mf.Model.Predict(q)
	if err != nil {
		return &usage.Error{Err: err}
	}
	barrier := fmt.Sprintf("every %gs", q.Barrier)
	if q.EpochRows > 0 {
		barrier = fmt.Sprintf("every %g rows", q.EpochRows)
	}
	fmt.Fprintf(w, "%s, %g rows, %g vnodes, barriers %s, persist=%s:\n", mf.Config, q.Rows, vnodeCount(q.Vnodes), barrier, contract.OnOff(q.Persist))
	fmt.Fprintf(w, "  time   %.4g s [%.4g, %.4g]\n  rows/s %.4g [%.4g, %.4g]\n  epochs %.0f\n",
		p.Seconds, p.SecondsLo, p.SecondsHi, p.RowsPerSec, q.Rows/p.SecondsHi, q.Rows/p.SecondsLo, p.Epochs)
	if q.Persist {
		off := q
		off.Persist = false
		if po, err := mf.Model.Predict(off); err == nil {
			fmt.Fprintf(w, "  persistence overhead %+.1f %% of persist=off's %.4g s\n", 100*(p.Seconds/po.Seconds-1), po.Seconds)
		}
	}
	return nil
}

// readModel reads a model file that benchrun fit wrote.
func readModel(path string) (*modelFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var mf modelFile
	if err := json.Unmarshal(data, &mf); err != nil {
		return nil, fmt.Errorf("%s: not a model that benchrun fit wrote: %v", path, err)
	}
	if mf.Model == nil {
		return nil, fmt.Errorf("%s: not a model that benchrun fit wrote: it has no \"model\"", path)
	}
	return &mf, nil
}

// vnodeCount is a query's vnodes, 0 meaning the default.
func vnodeCount(v float64) float64 {
	if v <= 0 {
		return contract.DefaultVnodes
	}
	return v
}
