// Package callgrind marks the window whose instructions Valgrind's callgrind counts,
// and reads the counts back: client requests issued without cgo, no-ops outside
// Valgrind.
package callgrind

import "sync/atomic"

// Request codes, from Valgrind's valgrind.h and callgrind.h: callgrind's are
// 'C'<<24 | 'T'<<16 plus an offset.
const (
	reqRunningOnValgrind = 0x1001
	reqBase              = 'C'<<24 | 'T'<<16
	reqDumpStats         = reqBase + 0
	reqZeroStats         = reqBase + 1
	reqStartInstr        = reqBase + 4
	reqStopInstr         = reqBase + 5
)

func do(code uintptr) uintptr {
	args := [6]uintptr{code}
	return request(&args)
}

// Running says whether the process runs under Valgrind (any tool).
func Running() bool { return do(reqRunningOnValgrind) != 0 }

// Window marks one stretch of a process whose instructions callgrind counts, on
// every thread. The process runs with --instr-atstart=no (Options): Start turns
// instrumentation on and zeroes callgrind's counters, Stop dumps them to a file of
// their own (the run's output file name with .1, .2, … appended: see ReadWindows)
// and turns instrumentation off, so that the rest of the process runs at about
// twice the speed and is not counted. Collection itself stays on: callgrind keeps
// its collect switch per thread, so toggling it from the goroutine that starts a
// job (and again from the one that commits its last epoch, often on another
// thread) counted the wrong threads. Start and Stop may be called from different
// goroutines. The zero Window is ready; outside Valgrind its methods cost a few
// instructions and do nothing.
type Window struct{ open atomic.Bool }

// Start opens the window; a second Start before Stop does nothing.
func (w *Window) Start() {
	if !Running() || !w.open.CompareAndSwap(false, true) {
		return
	}
	do(reqStartInstr)
	do(reqZeroStats)
}

// Stop closes the window; it does nothing when the window is not open, so a
// deferred Stop after an explicit one is harmless.
func (w *Window) Stop() {
	if !w.open.CompareAndSwap(true, false) {
		return
	}
	do(reqDumpStats)
	do(reqStopInstr)
}
