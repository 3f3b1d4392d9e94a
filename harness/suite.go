package harness

import (
	"fmt"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
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
// counts (instructions/row at 1 %, no wall-clock unit).
func InstructionSuite() Suite {
	s := base("instructions", func(*profile.Set) contract.Matrix { return InstructionMatrix() }, InstructionCount)
	s.By, s.Thresholds = MeasureInstructions, judge.InstructionThresholds
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
