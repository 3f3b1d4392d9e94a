package harness

import (
	"fmt"
	"slices"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/rates"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/runner"
)

// Suite is a preset of what a command measures and how it judges it: every default
// of the matrix, rounds, timeout, pairing, extras and statistics in one place. A
// command applies its suite first, then the flags given (cmd/benchrun).
type Suite struct {
	Name string
	// Matrix is the suite's cells from the profiles it may use: the built-in ones and
	// those of --profile-file (a nightly profile of a file joins the nightly matrix).
	Matrix     func(*profile.Set) contract.Matrix
	Count      int           // rounds
	Timeout    time.Duration // per run
	Pairing    string        // runner.Pairing; "": a duet where the machine can
	By         string        // MeasureTime or MeasureInstructions
	RawCopy    bool          // also run the baselines after the cells
	Recoveries bool          // also run NightlyRecoveries of the matrix after the cells
	// Statistics of compare, bisect, noise and nightly.
	Alpha      float64
	Correction string
	Thresholds func() judge.Thresholds
	Confirm    int           // batches of Count rounds re-run for suspected regressions
	Budget     time.Duration // wall time of a compare with adaptive rounds
}

// base is what every suite shares unless it says otherwise.
func base(name string, matrix func(*profile.Set) contract.Matrix, count int) Suite {
	return Suite{Name: name, Matrix: matrix, Count: count, Timeout: runner.DefaultTimeout, By: MeasureTime,
		Alpha: judge.DefaultAlpha, Correction: judge.Holm, Thresholds: judge.DefaultThresholds, Confirm: 1, Budget: 8 * time.Minute}
}

func quick(*profile.Set) contract.Matrix { return QuickMatrix() }

// QuickSuite is `benchrun run`'s default: the quick matrix, QuickCount rounds.
func QuickSuite() Suite { return base("quick", quick, QuickCount) }

// PRSuite is compare's and bisect's: the quick matrix, 12 rounds a side (at the
// adaptive α corrected over the quick suite's 20 judged pairs, 11 rounds pass the
// paired test only if every round agrees, 12 leave room for one), one confirming
// batch, adaptive rounds within 8 minutes.
func PRSuite() Suite { return base("pr", quick, 12) }

// NoiseSuite is noise's: the quick matrix, 10 rounds of A/A pairs.
func NoiseSuite() Suite { return base("noise", quick, 10) }

// NightlySuite is the nightly matrix of every nightly profile, NightlyCount rounds,
// back to back (a night's absolute figures are compared with earlier nights': the
// whole machine, as before), with the recoveries after the cells.
func NightlySuite() Suite {
	s := base("nightly", NightlyMatrix, NightlyCount)
	s.Pairing, s.Recoveries = string(runner.Sequential), true
	return s
}

// ScaleSuite is the scale sweep for `benchrun fit`: ScaleCount rounds, back to
// back (the raw copies and the cost model are of a job alone on the machine), with
// the baselines.
func ScaleSuite() Suite {
	s := base("scale", func(*profile.Set) contract.Matrix { return ScaleMatrix() }, ScaleCount)
	s.Pairing, s.RawCopy = string(runner.Sequential), true
	return s
}

// InstructionSuite is the quick suite counted under callgrind (--measure
// instructions): InstructionMatrix, InstructionCount rounds, the thresholds of
// counts (instructions/row at 1 %, no wall-clock unit), and no confirmation
// re-run: a busy machine does not move counts, so a re-run would only repeat them.
func InstructionSuite() Suite {
	s := base("instructions", func(*profile.Set) contract.Matrix { return InstructionMatrix() }, InstructionCount)
	s.By, s.Thresholds, s.Confirm = MeasureInstructions, judge.InstructionThresholds, 0
	return s
}

// Suites are every suite, by name.
func Suites() []Suite {
	return []Suite{QuickSuite(), PRSuite(), NoiseSuite(), NightlySuite(), ScaleSuite(), InstructionSuite()}
}

// SuiteNamed is the suite of that name.
func SuiteNamed(name string) (Suite, error) {
	var names []string
	for _, s := range Suites() {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return Suite{}, fmt.Errorf("no suite %q: want one of %v", name, names)
}

// QuickMatrix is the default suite: two workloads, persistence off and on, on the
// in-memory profile (its WAL takes every write; no flush happens) and on hummock
// (checkpointed: every checkpoint flushes its epoch to L0, and L0 compacts, as in
// the engine), snapshot backfill (RisingWave's default scan), with barriers cut by
// work (every 2 500 snapshot rows: 120 epochs of snapshot, then about twice as
// many of change-log replay, every run the same).
func QuickMatrix() contract.Matrix {
	return contract.Matrix{
		Profiles: []string{"mem", "hummock"}, Workloads: []string{"narrow", "bid"}, Rows: []int64{300_000},
		Persist: []bool{false, true}, Scans: []string{"snapshot"},
		Barriers: []rates.Cadence{{Rows: 2500}}, Pars: []int{2},
	}
}

// ScaleMatrix is the scale sweep: table sizes from 10⁵ to 10⁸ rows, two per decade
// below 10⁷ so that `fit` has four sizes to check itself on where 10⁸ does not fit
// (cells too large for the machine are skipped, saying why), barriers of two sizes (work-driven,
// so their epochs are known, and two, so `benchrun fit` can tell per-epoch from
// per-row costs), persistence off and on, on the in-memory profile; add
// --vnodes, --par, --workload or --profile lists to sweep those too.
func ScaleMatrix() contract.Matrix {
	return contract.Matrix{
		Profiles: []string{"mem"}, Workloads: []string{"narrow"}, Rows: []int64{100_000, 300_000, 1_000_000, 3_000_000, 10_000_000, 100_000_000},
		Persist: []bool{false, true}, Scans: []string{"merged"},
		Barriers: []rates.Cadence{{Rows: 5000}, {Rows: 50_000}}, Pars: []int{2},
	}
}

// ScaleCount is the scale sweep's default number of rounds: MinCount, the fewest
// with a 95 % interval (and a persistence overhead with one).
const ScaleCount = MinCount

// MinCount is the fewest rounds for which benchstat gives a 95 % confidence
// interval of a median.
const MinCount = 6

// QuickCount is the quick suite's default number of rounds. Since hummock's
// compactions became serial (each checkpoint's commit runs them to completion, so
// its bytes repeat exactly), a round of the quick suite takes ~98 s in duets on 2
// cores (measured: go run ./cmd/benchrun run --count 2, 3 min 26 s with the build:
// mem pairs 2–4 s, hummock narrow 23–33 s, hummock bid 62–66 s), so 8 rounds, two
// more than benchstat's fewest for a 95 % interval, keep make bench near a quarter
// of an hour. `--profile mem --count 48` gives the mem cells' old precision
// (on-vs-off intervals of steady rows/s and CPU per row within ±0.6–0.8 %).
const QuickCount = 8

// NightlyMatrix is the matrix that guards main: the quick suite's cells (work-driven
// barriers, so every night does the same work) on every profile marked nightly and
// with every scan, plus the composite-key workload (groups: a grouped MV's
// three-column key, one column descending), so that every scan's filter and
// positions are checked on a key of more than one column every night.
func NightlyMatrix(profiles *profile.Set) contract.Matrix {
	m := QuickMatrix()
	m.Profiles = nil
	for _, p := range profiles.All() {
		if p.Nightly {
			m.Profiles = append(m.Profiles, p.Name)
		}
	}
	m.Scans = contract.Scans
	m.Workloads = append(slices.Clone(m.Workloads), "groups")
	return m
}

// NightlyCount is the rounds of a nightly run: MinCount, the fewest for which
// a night's median has a 95 % interval (the dashboard's band; with 5 it had none).
const NightlyCount = MinCount

// InstructionMatrix is the suite when counting instructions: one cell of the
// quick suite, in memory, narrow rows, persistence on (it runs every path of the
// job: scan, MV and state writes), at a tenth of its rows (under callgrind a job
// runs 20–50× slower: ~75 s with two at once on 2 cores), with its barrier every
// 2 500 rows, so that per-row work weighs as much against per-barrier work as
// there (a barrier reopens an iterator per vnode: ~9.5 M instructions; with a
// barrier every 250 rows it made 3/4 of instructions/row and hid per-row changes).
// One cell, so that a compare of InstructionCount rounds fits in about 10 minutes
// on 2 cores; the dimension flags widen it. Its jobs are too short for steady-state
// figures, which counts do not need. Without the memtable skiplist the window's
// count varies ~0.11 % (sd) run to run at this size.
func InstructionMatrix() contract.Matrix {
	m := QuickMatrix()
	m.Profiles, m.Workloads, m.Persist = []string{"mem"}, []string{"narrow"}, []bool{true}
	m.Rows = []int64{30_000}
	return m
}

// InstructionCount is the default rounds of a counting compare or run: Welch's
// test judges counts (judge.Options.Welch), whose p-value has no floor to keep it
// from α at few rounds (the signed-rank test needed 11); 5 a side put the 95 %
// interval of a compare at about ±0.2 % with the counts' noise.
const InstructionCount = 5
