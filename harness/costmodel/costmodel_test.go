package costmodel

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// synthetic makes jobs from known coefficients with 2 % noise, at the vnode counts
// given.
func synthetic(c Coefficients, seed uint64, vnodes ...float64) []Job {
	r := rand.New(rand.NewPCG(seed, 1))
	var jobs []Job
	for _, v := range vnodes {
		for _, rows := range []float64{1e5, 3e5, 1e6, 3e6} {
			for _, perEpoch := range []float64{5000, 50000} {
				for _, persist := range []bool{false, true} {
					for range 3 {
						e := rows / perEpoch
						p := 0.0
						if persist {
							p = 1
						}
						t := c[0]*rows + c[1]*rows*math.Log10(rows) + c[2]*e + c[3]*e*p*v/256 + c[4]*e*v/256 + c[5]*e*math.Log10(rows)
						jobs = append(jobs, Job{Rows: rows, Epochs: e, Vnodes: v, Persist: persist, Seconds: t * (1 + 0.02*r.NormFloat64()), EpochRows: perEpoch})
					}
				}
			}
		}
	}
	return jobs
}

// TestFitRecoversCoefficients: on synthetic jobs with known coefficients, every
// fitted coefficient's 95 % interval holds the true one, and the intervals are
// narrow enough to mean something.
func TestFitRecoversCoefficients(t *testing.T) {
	truth := Coefficients{4e-7, 5e-8, 2e-3, 5e-4, 1e-3, 5e-4}
	m, err := Fit(synthetic(truth, 1, 64, 256, 1024), 500, 2)
	if err != nil {
		t.Fatal(err)
	}
	for k := range truth {
		if truth[k] < m.Lo[k] || truth[k] > m.Hi[k] {
			t.Errorf("%s: true %g outside [%g, %g] (fit %g)", Names[k], truth[k], m.Lo[k], m.Hi[k], m.Coef[k])
		}
	}
	if w := (m.Hi[0] - m.Lo[0]) / truth[0]; w > 1 {
		t.Errorf("per-row interval %.0f %% of the value: too wide to recover anything", 100*w)
	}
}

// TestPredict: a prediction solves the time-driven epochs (T = rows term ÷ (1 −
// epoch cost/B)); predict refuses what the fit cannot speak for.
func TestPredict(t *testing.T) {
	truth := Coefficients{4e-7, 5e-8, 2e-3, 5e-4, 1e-3, 5e-4}
	m, err := Fit(synthetic(truth, 3, 64, 256, 1024), 300, 4)
	if err != nil {
		t.Fatal(err)
	}
	q := Query{Rows: 1e8, Barrier: 1, Persist: true}
	p, err := m.Predict(q)
	if err != nil {
		t.Fatal(err)
	}
	want := (truth[0]*1e8 + truth[1]*1e8*8) / (1 - (truth[2]+truth[3]+truth[4]+8*truth[5])/1)
	if math.Abs(p.Seconds/want-1) > 0.1 || p.SecondsLo > want || p.SecondsHi < want {
		t.Errorf("1e8 rows: predicted %.1fs [%.1f, %.1f], true %.1fs", p.Seconds, p.SecondsLo, p.SecondsHi, want)
	}
	// The vnode-proportional epoch costs scale: 16× at 4096.
	many, err := m.Predict(Query{Rows: 1e6, EpochRows: 5000, Persist: true, Vnodes: 4096})
	few, _ := m.Predict(Query{Rows: 1e6, EpochRows: 5000, Persist: true})
	if extra := 15 * (m.Coef[3] + m.Coef[4]) * 200; err != nil || math.Abs((many.Seconds-few.Seconds)/extra-1) > 1e-9 {
		t.Errorf("4096 vnodes: %.4fs vs %.4fs at 256, %v; want %.4fs more over 200 epochs", many.Seconds, few.Seconds, err, extra)
	}
	// Work-driven: the epochs are the rows over the rows per epoch.
	wq, err := m.Predict(Query{Rows: 3e6, EpochRows: 5000, Persist: true})
	if wantW := truth[0]*3e6 + truth[1]*3e6*math.Log10(3e6) + (truth[2]+truth[3]+truth[4]+truth[5]*math.Log10(3e6))*600; err != nil || math.Abs(wq.Seconds/wantW-1) > 0.05 || wq.Epochs != 600 {
		t.Errorf("3e6 rows, 5000 per epoch: %+v, %v; want %.2fs over 600 epochs", wq, err, wantW)
	}
	for _, tc := range []struct {
		q    Query
		want string
	}{
		{Query{Rows: 1e12, Barrier: 1}, "more than"},
		{Query{Rows: 10, Barrier: 1}, "smallest measured"},
		{Query{Rows: 1e6, Barrier: 0.001}, "no steady state"},
		{Query{Rows: 1e6, Barrier: 0}, "barrier interval > 0"},
	} {
		if _, err := m.Predict(tc.q); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want one saying %q", tc.q, err, tc.want)
		}
	}
	off := synthetic(truth, 5, 256)[:0]
	for _, j := range synthetic(truth, 5, 256) {
		if !j.Persist {
			off = append(off, j)
		}
	}
	mOff, err := Fit(off, 100, 6)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mOff.Predict(Query{Rows: 1e6, Barrier: 1, Persist: true}); err == nil || !strings.Contains(err.Error(), "without such jobs") {
		t.Errorf("persist=on from a model of persist=off jobs: err = %v", err)
	}
	if _, err := mOff.Predict(Query{Rows: 1e6, Barrier: 1}); err != nil {
		t.Errorf("persist=off from a model of persist=off jobs: %v", err)
	}
	if _, err := mOff.Predict(Query{Rows: 1e6, Barrier: 1, Vnodes: 4096}); err == nil || !strings.Contains(err.Error(), "256 vnodes only") {
		t.Errorf("4096 vnodes from a model of 256: err = %v", err)
	}
	if _, err := Fit(synthetic(truth, 7, 256)[:5], 10, 8); err == nil {
		t.Error("fitted 5 jobs")
	}
}

// TestHoldOut: fitted on the smaller sizes, a model of jobs that follow it predicts
// the largest size within the tolerance; jobs that get 40 % slower at the largest
// size than the model's terms allow are caught, with the error they have. Three
// sizes are refused: the model fitted on two would lack the epoch cost's growth.
func TestHoldOut(t *testing.T) {
	truth := Coefficients{4e-7, 5e-8, 2e-3, 5e-4, 0, 5e-4}
	jobs := synthetic(truth, 9, 256)
	trained, checks, err := HoldOut(jobs, 200, 3)
	if err != nil {
		t.Fatal(err)
	}
	if trained != [2]float64{1e5, 1e6} || len(checks) != 4 {
		t.Fatalf("trained on %v, %d checks; want 1e5 to 1e6 and 4 (2 barriers × 2 persistence modes)", trained, len(checks))
	}
	for _, c := range checks {
		if c.Rows != 3e6 || c.Jobs != 3 || !c.Holds || math.Abs(c.Error) > 0.05 || c.PredLo > c.Predicted || c.PredHi < c.Predicted {
			t.Errorf("%+v: want 3 jobs at 3e6 rows predicted within 5 %%, with an interval around the prediction", c)
		}
	}
	for i := range jobs {
		if jobs[i].Rows == 3e6 {
			jobs[i].Seconds *= 1.4
		}
	}
	_, checks, err = HoldOut(jobs, 200, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if c.Holds || math.Abs(c.Error-(1/1.4-1)) > 0.05 {
			t.Errorf("%+v: want the 40 %% slowdown caught, an error near %.0f %%", c, 100*(1/1.4-1))
		}
	}
	var three []Job
	for _, j := range jobs {
		if j.Rows <= 1e6 {
			three = append(three, j)
		}
	}
	if _, _, err := HoldOut(three, 10, 3); err == nil || !strings.Contains(err.Error(), "at least 4") {
		t.Errorf("three sizes: err = %v", err)
	}
}

// TestBootstrapKeepsTheModelsTerms: on a small sweep some resamples lose a size;
// none of them may stand in the bootstrap as a fit without the epoch cost's growth
// (which would put 0 inside its interval). The jobs are exact, so every resample
// kept recovers the true coefficients.
func TestBootstrapKeepsTheModelsTerms(t *testing.T) {
	truth := Coefficients{4e-7, 5e-8, 2e-3, 5e-4, 0, 5e-4}
	var jobs []Job
	for _, rows := range []float64{1e5, 1e6, 3e6} {
		for _, perEpoch := range []float64{5000, 50000} {
			for _, persist := range []bool{false, true} {
				e, p := rows/perEpoch, 0.0
				if persist {
					p = 1
				}
				sec := truth[0]*rows + truth[1]*rows*math.Log10(rows) + truth[2]*e + truth[3]*e*p + truth[5]*e*math.Log10(rows)
				jobs = append(jobs, Job{Rows: rows, Epochs: e, Persist: persist, Seconds: sec, EpochRows: perEpoch})
			}
		}
	}
	m, err := Fit(jobs, 1000, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Boot) == 1000 {
		t.Errorf("all 1 000 resamples kept; with 12 jobs over 3 sizes some lose a size")
	}
	for i, c := range m.Boot {
		if math.Abs(c[5]/truth[5]-1) > 1e-6 {
			t.Fatalf("resample %d: per-epoch-per-decade %g, want %g", i, c[5], truth[5])
		}
	}
}
