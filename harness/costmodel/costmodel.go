// Package costmodel fits a model of a backfill job's time to measured jobs and
// predicts jobs larger than any measured, with intervals.
//
// The model: a job of N snapshot rows in E epochs takes
//
//	T = a·N + b·N·log10(N) + c·E + f·E·log10(N) + d·E·persist·V/256 + e·E·V/256
//
// seconds: a per-row cost, a per-row cost that grows with the table (the LSM's
// depth: compaction and read amplification), a per-epoch cost (the commit, the
// scans' reopening) with a part that grows with the table too (every reopened scan
// seeks through more levels and files), the per-epoch cost of persisting state,
// which grows with the V vnodes whose state rows it writes, and the per-epoch cost
// of reopening the scans, one iterator per vnode (d and e are their costs at 256
// vnodes; e is fitted only when the jobs' vnodes vary, and otherwise is part of c;
// f only over three table sizes or more). With barriers every B seconds, E = T/B,
// so a prediction solves T = (a·N + b·N·log10 N) / (1 − per-epoch cost/B).
// Intervals come from refitting bootstrap resamples of the jobs.
package costmodel

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Job is one measured job.
type Job struct {
	Rows, Epochs float64
	Vnodes       float64 // 0: 256
	Persist      bool
	Seconds      float64 // wall time
	// Its barriers, as a Query has them (for the held-out check): every Barrier
	// seconds, or every EpochRows snapshot rows when that is > 0.
	Barrier, EpochRows float64
}

// query is the prediction that j's measurement answers.
func (j Job) query() Query {
	return Query{Rows: j.Rows, Barrier: j.Barrier, EpochRows: j.EpochRows, Vnodes: j.Vnodes, Persist: j.Persist}
}

// vnodeScale is a job's vnodes relative to 256, the persisted-epoch cost's unit.
func vnodeScale(v float64) float64 {
	if v <= 0 {
		return 1
	}
	return v / 256
}

// Coefficients are the model's a, b, c, d, e, f (seconds per row, per row and decade
// of rows, per epoch, per persisted epoch, per epoch at 256 vnodes, and per epoch
// and decade of rows).
type Coefficients [6]float64

// Names are the coefficients' names, in order.
var Names = [6]string{"per-row", "per-row-per-decade", "per-epoch", "per-persisted-epoch", "per-epoch-per-256-vnodes", "per-epoch-per-decade"}

// Model is a fit with its bootstrap.
type Model struct {
	Coef       Coefficients   `json:"coef"`
	Lo         Coefficients   `json:"lo"` // the 95 % interval
	Hi         Coefficients   `json:"hi"`
	Boot       []Coefficients `json:"boot"` // the resamples' fits, for prediction intervals
	MinRows    float64        `json:"min_rows"`
	MaxRows    float64        `json:"max_rows"`
	Vnodes     []float64      `json:"vnodes"` // the vnode counts measured
	Sizes      int            `json:"sizes"`  // the table sizes measured
	Jobs       int            `json:"jobs"`
	Persist    [2]bool        `json:"persist_seen"` // off, on
	Confidence float64        `json:"confidence"`
}

// Fit fits the model by least squares, and its 95 % intervals from boot bootstrap
// resamples of the jobs (seeded).
func Fit(jobs []Job, boot int, seed uint64) (*Model, error) {
	if len(jobs) < 8 {
		return nil, fmt.Errorf("costmodel: %d jobs: want at least 8, over several sizes and epoch counts", len(jobs))
	}
	terms := termsOf(jobs)
	coef, err := solve(jobs, terms)
	if err != nil {
		return nil, err
	}
	m := &Model{Coef: coef, Jobs: len(jobs), MinRows: math.Inf(1), Confidence: 0.95}
	m.Sizes = len(sizesOf(jobs))
	for _, j := range jobs {
		m.MinRows, m.MaxRows = math.Min(m.MinRows, j.Rows), math.Max(m.MaxRows, j.Rows)
		if v := 256 * vnodeScale(j.Vnodes); !slices.Contains(m.Vnodes, v) {
			m.Vnodes = append(m.Vnodes, v)
		}
		if j.Persist {
			m.Persist[1] = true
		} else {
			m.Persist[0] = true
		}
	}
	// A resample that lost a size, a persistence mode or a vnode count cannot tell
	// every term of the model apart; it is left out rather than fitted without that
	// term, which would pull the term's interval toward 0.
	r := rand.New(rand.NewPCG(seed, 0x636f7374))
	sample := make([]Job, len(jobs))
	for range boot {
		for i := range sample {
			sample[i] = jobs[r.IntN(len(jobs))]
		}
		if !slices.Equal(termsOf(sample), terms) {
			continue
		}
		if c, err := solve(sample, terms); err == nil {
			m.Boot = append(m.Boot, c)
		}
	}
	if len(m.Boot) < boot/2 {
		return nil, errors.New("costmodel: most bootstrap resamples could not be fitted: the jobs do not vary enough (sizes, epoch counts, persistence), or too few jobs stand for one size, persistence mode or vnode count for the resamples to keep it: measure more rounds")
	}
	for k := range m.Coef {
		vals := make([]float64, len(m.Boot))
		for i, c := range m.Boot {
			vals[i] = c[k]
		}
		m.Lo[k], m.Hi[k] = percentile(vals, 0.025), percentile(vals, 0.975)
	}
	return m, nil
}

// termsOf are the coefficients the jobs can tell apart. Without jobs of both
// persistence modes the per-persisted-epoch cost cannot be told from the per-epoch
// one, nor the per-vnode epoch cost without jobs of several vnode counts, nor the
// epoch cost's growth with the table from the per-row terms' with fewer than
// three sizes: each is then left at 0, and the per-epoch cost is that of what was
// measured.
func termsOf(jobs []Job) []int {
	var on, off, vary bool
	for _, j := range jobs {
		on, off = on || j.Persist, off || !j.Persist
		vary = vary || vnodeScale(j.Vnodes) != vnodeScale(jobs[0].Vnodes)
	}
	terms := []int{0, 1, 2}
	if on && off {
		terms = append(terms, 3)
	}
	if vary {
		terms = append(terms, 4)
	}
	if len(sizesOf(jobs)) >= MinSizesForGrowth {
		terms = append(terms, 5)
	}
	return terms
}

// solve is the least-squares fit of the jobs' times by the given coefficients; the
// others are 0.
func solve(jobs []Job, terms []int) (Coefficients, error) {
	x := mat.NewDense(len(jobs), len(terms), nil)
	y := mat.NewVecDense(len(jobs), nil)
	for i, j := range jobs {
		p, vs := 0.0, vnodeScale(j.Vnodes)
		if j.Persist {
			p = 1
		}
		all := [6]float64{j.Rows, j.Rows * math.Log10(j.Rows), j.Epochs, j.Epochs * p * vs, j.Epochs * vs, j.Epochs * math.Log10(j.Rows)}
		for k, t := range terms {
			x.Set(i, k, all[t])
		}
		y.SetVec(i, j.Seconds)
	}
	var qr mat.QR
	qr.Factorize(x)
	var b mat.VecDense
	if err := qr.SolveVecTo(&b, false, y); err != nil {
		return Coefficients{}, fmt.Errorf("costmodel: the jobs do not determine the model: %w", err)
	}
	var c Coefficients
	for k, t := range terms {
		c[t] = b.AtVec(k)
		if math.IsNaN(c[t]) || math.IsInf(c[t], 0) {
			return c, errors.New("costmodel: the jobs do not determine the model")
		}
	}
	return c, nil
}

// sizesOf are the jobs' distinct table sizes.
func sizesOf(jobs []Job) []float64 {
	var sizes []float64
	for _, j := range jobs {
		if !slices.Contains(sizes, j.Rows) {
			sizes = append(sizes, j.Rows)
		}
	}
	return sizes
}

// MinSizesForGrowth is how many table sizes the fit needs to tell the epoch cost's
// growth with the table (f) from the per-row terms'.
const MinSizesForGrowth = 3

func percentile(v []float64, q float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[int(math.Round(q*float64(len(s)-1)))]
}

// Query is a job to predict: its rows, its barriers (every Barrier seconds, or
// every EpochRows snapshot rows when that is > 0), persistence.
type Query struct {
	Rows, Barrier float64
	EpochRows     float64
	Vnodes        float64 // 0: 256
	Persist       bool
}

// Prediction is a predicted job: its time and throughput, each with its interval.
type Prediction struct {
	Seconds, SecondsLo, SecondsHi float64
	RowsPerSec                    float64
	Epochs                        float64
}

// MaxExtrapolation is how far beyond the largest measured job a prediction may go,
// as a factor of rows: the N·log N term carries it, and further out is a guess.
const MaxExtrapolation = 10_000

// Predict predicts q, refusing what the fit cannot speak for: persistence it never
// saw, tables far outside the measured sizes, and barriers shorter than an epoch's
// own fixed cost (no steady state: epochs would take longer than the interval).
func (m *Model) Predict(q Query) (Prediction, error) {
	switch {
	case q.Rows <= 0 || q.Barrier <= 0 && q.EpochRows <= 0:
		return Prediction{}, fmt.Errorf("predict: want rows > 0 and a barrier interval > 0")
	case q.Persist && !m.Persist[1] || !q.Persist && !m.Persist[0]:
		return Prediction{}, fmt.Errorf("predict: persist=%v: the model was fitted without such jobs", q.Persist)
	case q.Rows < m.MinRows/10:
		return Prediction{}, fmt.Errorf("predict: %g rows: the smallest measured job had %g; fixed costs the model leaves out dominate below that", q.Rows, m.MinRows)
	case len(m.Vnodes) == 1 && 256*vnodeScale(q.Vnodes) != m.Vnodes[0]:
		return Prediction{}, fmt.Errorf("predict: %g vnodes: the model was fitted at %g vnodes only; measure several (--vnodes) to predict others", 256*vnodeScale(q.Vnodes), m.Vnodes[0])
	case q.Rows > m.MaxRows*MaxExtrapolation:
		return Prediction{}, fmt.Errorf("predict: %g rows: more than %d× the largest measured job (%g rows); measure larger jobs first", q.Rows, MaxExtrapolation, m.MaxRows)
	}
	t, err := seconds(m.Coef, q)
	if err != nil {
		return Prediction{}, err
	}
	var ts []float64
	for _, c := range m.Boot {
		if bt, err := seconds(c, q); err == nil {
			ts = append(ts, bt)
		}
	}
	p := Prediction{Seconds: t, RowsPerSec: q.Rows / t, SecondsLo: t, SecondsHi: t}
	if q.EpochRows > 0 {
		p.Epochs = math.Ceil(q.Rows / q.EpochRows)
	} else {
		p.Epochs = t / q.Barrier
	}
	if len(ts) > 0 {
		p.SecondsLo, p.SecondsHi = percentile(ts, 0.025), percentile(ts, 0.975)
	}
	return p, nil
}

func seconds(c Coefficients, q Query) (float64, error) {
	vs := vnodeScale(q.Vnodes)
	perEpoch := c[2] + c[4]*vs + c[5]*math.Log10(q.Rows)
	if q.Persist {
		perEpoch += c[3] * vs
	}
	rows := c[0]*q.Rows + c[1]*q.Rows*math.Log10(q.Rows)
	if q.EpochRows > 0 { // work-driven: the epochs are known
		if t := rows + perEpoch*math.Ceil(q.Rows/q.EpochRows); t > 0 {
			return t, nil
		}
		return 0, fmt.Errorf("predict: the model gives no positive time at %g rows", q.Rows)
	}
	if perEpoch >= q.Barrier {
		return 0, fmt.Errorf("predict: an epoch's fixed cost (%.3gs) is not below the barrier interval (%gs): no steady state", perEpoch, q.Barrier)
	}
	if rows <= 0 {
		return 0, fmt.Errorf("predict: the per-row terms are not positive at %g rows", q.Rows)
	}
	return rows / (1 - perEpoch/q.Barrier), nil
}

// Tolerance is the held-out error within which the model is said to hold (the
// scale issue's target).
const Tolerance = 0.15

// Check is one held-out configuration: the median of its measured jobs against
// the prediction of a model fitted without the largest size.
type Check struct {
	Query
	Jobs                      int
	Measured                  float64 // median seconds
	Predicted, PredLo, PredHi float64
	Error                     float64 // predicted ÷ measured − 1
	Holds                     bool    // |Error| ≤ Tolerance
	Refused                   string  `json:",omitempty"` // why no prediction was made
}

// HoldOut checks how well the model extrapolates: it fits the jobs smaller than
// the largest size and predicts each configuration of the largest (its barriers,
// vnodes and persistence). It needs MinSizesForGrowth+1 sizes or more, so that the
// model it checks has the terms of the model fitted on every size.
func HoldOut(jobs []Job, boot int, seed uint64) (trainedRows [2]float64, checks []Check, err error) {
	sizes := sizesOf(jobs)
	if len(sizes) < MinSizesForGrowth+1 {
		return trainedRows, nil, fmt.Errorf("costmodel: %d table sizes: the held-out check needs at least %d (the model's growth with the table needs %d, and the check holds the largest out); measure another size",
			len(sizes), MinSizesForGrowth+1, MinSizesForGrowth)
	}
	largest := slices.Max(sizes)
	var train []Job
	held := map[Query][]float64{}
	var order []Query
	for _, j := range jobs {
		if j.Rows < largest {
			train = append(train, j)
			continue
		}
		q := j.query()
		if _, ok := held[q]; !ok {
			order = append(order, q)
		}
		held[q] = append(held[q], j.Seconds)
	}
	m, err := Fit(train, boot, seed)
	if err != nil {
		return trainedRows, nil, err
	}
	for _, q := range order {
		c := Check{Query: q, Jobs: len(held[q]), Measured: median(held[q])}
		p, err := m.Predict(q)
		if err != nil {
			c.Refused = err.Error()
		} else {
			c.Predicted, c.PredLo, c.PredHi = p.Seconds, p.SecondsLo, p.SecondsHi
			c.Error = p.Seconds/c.Measured - 1
			c.Holds = math.Abs(c.Error) <= Tolerance
		}
		checks = append(checks, c)
	}
	return [2]float64{m.MinRows, m.MaxRows}, checks, nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
