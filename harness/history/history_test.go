package history

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/judge"
)

// syntheticNights makes a history of one cell's rows/s: level(i) is night i's true
// level, each night has 5 samples with 1 % noise.
func syntheticNights(seed uint64, n int, level func(i int) float64) []Night {
	rng := rand.New(rand.NewPCG(seed, 3))
	units := contract.UnitMap()
	var nights []Night
	for i := range n {
		night := Night{Name: fmt.Sprintf("202611%02dT020000Z-c%02d", i+1, i), Commit: fmt.Sprintf("c%02d", i), Units: units}
		for range 5 {
			night.Results = append(night.Results, &benchfmt.Result{
				Name:   benchfmt.Name("Backfill/profile=mem/workload=narrow/rows=1/persist=on/scan=merged/barrier=1s/par=2-2"),
				Iters:  1,
				Values: []benchfmt.Value{{Value: level(i) * (1 + 0.01*rng.NormFloat64()), Unit: "rows/s"}},
			})
		}
		nights = append(nights, night)
	}
	return nights
}

func analyze(t *testing.T, nights []Night) []Alert {
	t.Helper()
	alerts, err := Analyze(nights, Config{Options: judge.Options{Thresholds: wholeJobThresholds()}})
	if err != nil {
		t.Fatal(err)
	}
	return alerts
}

func kinds(alerts []Alert) map[string]int {
	out := map[string]int{}
	for _, a := range alerts {
		out[a.Kind+"/"+a.Status.String()]++
	}
	return out
}

func TestHistoryStepIsAChangePoint(t *testing.T) {
	// Throughput drops 8 % from night 12 on.
	nights := syntheticNights(1, 20, func(i int) float64 {
		if i >= 12 {
			return 92
		}
		return 100
	})
	alerts := analyze(t, nights)
	var found bool
	for _, a := range alerts {
		if a.Kind == AlertChange {
			// The night before the change is the good end of a bisect.
			found = a.Status == judge.Regression && a.Commit == "c12" && a.Previous == "c11" && a.Delta < -0.05
			if !found {
				t.Errorf("change alert %+v, want a regression at commit c12, after c11", a)
			}
		}
	}
	if !found {
		t.Errorf("no change-point alert: %+v", alerts)
	}
}

func TestHistoryNewestNightRegression(t *testing.T) {
	nights := syntheticNights(2, 10, func(i int) float64 {
		if i == 9 {
			return 90
		}
		return 100
	})
	newest := NewestRegressions(analyze(t, nights))
	if len(newest) != 1 || newest[0].Commit != "c09" || newest[0].Previous != "c08" {
		t.Errorf("newest-night regressions %+v, want one at c09, after c08", newest)
	}
	// An improvement in the newest night is not a regression.
	nights = syntheticNights(2, 10, func(i int) float64 {
		if i == 9 {
			return 110
		}
		return 100
	})
	if newest := NewestRegressions(analyze(t, nights)); len(newest) != 0 {
		t.Errorf("an improvement flagged as a regression: %+v", newest)
	}
}

func TestHistoryRampIsDrift(t *testing.T) {
	// A slow creep: 0.5 % slower every night, each step far inside the 3 % threshold.
	nights := syntheticNights(3, 20, func(i int) float64 { return 100 * (1 - 0.005*float64(i)) })
	k := kinds(analyze(t, nights))
	if k[AlertDrift+"/"+judge.Regression.String()] != 1 {
		t.Errorf("alerts %v, want the drift from the baseline caught", k)
	}
	if k[AlertNewest+"/"+judge.Regression.String()] != 0 {
		t.Errorf("alerts %v: the newest night alone is no regression", k)
	}
}

func TestHistoryNoiseFalseAlarms(t *testing.T) {
	const seeds = 100
	alarmed := 0
	for seed := range uint64(seeds) {
		if len(analyze(t, syntheticNights(100+seed, 20, func(int) float64 { return 100 }))) > 0 {
			alarmed++
		}
	}
	t.Logf("stable histories of 20 nights (1 %% noise) with any alert: %d of %d", alarmed, seeds)
	if alarmed > 5 {
		t.Errorf("%d of %d stable histories alerted", alarmed, seeds)
	}
}

func TestHistoryBaselineMustExist(t *testing.T) {
	nights := syntheticNights(4, 5, func(int) float64 { return 100 })
	if _, err := Analyze(nights, Config{Options: judge.Options{Thresholds: wholeJobThresholds()}, Baseline: "nope"}); err == nil {
		t.Error("an unknown pinned baseline was accepted")
	}
}

// wholeJobThresholds are the default thresholds plus whole-job throughput and wall
// time, which the fixtures and synthetic data here report.
func wholeJobThresholds() judge.Thresholds {
	th := judge.DefaultThresholds()
	th.Set("rows/s=3%,sec/op=3%,barrier-p99-sec=10%")
	return th
}
