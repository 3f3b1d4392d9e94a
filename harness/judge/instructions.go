package judge

import "github.com/backfill-bench/backfill-bench/contract"

// InstructionThresholds are the defaults when jobs are counted under callgrind
// (--measure instructions): instructions per row at 1 %, the exact figures
// (write amplification, allocations, re-emitted rows) as by default, and none of
// the wall-clock ones, which under valgrind measure valgrind.
func InstructionThresholds() Thresholds {
	t := DefaultThresholds()
	for _, unit := range []string{contract.UnitSteadyRows, contract.Tidy(contract.UnitSteadyCPU), contract.UnitBarrierP50, contract.UnitRecoverySec} {
		delete(t, unit)
	}
	t[contract.UnitInstrPerRow] = 0.01
	return t
}
