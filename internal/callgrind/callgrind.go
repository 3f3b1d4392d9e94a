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
	reqToggleCollect     = reqBase + 2
	reqStartInstr        = reqBase + 4
	reqStopInstr         = reqBase + 5
)

func do(code uintptr) uintptr {
	args := [6]uintptr{code}
	return request(&args)
}

// Running says whether the process runs under Valgrind (any tool).
func Running() bool { return do(reqRunningOnValgrind) != 0 }

// Window marks one stretch of a process whose instructions callgrind counts. The
// process must run under callgrind with --instr-atstart=no --collect-atstart=no
// (see Args): Start turns instrumentation and collection on, Stop both off, so
// everything outside the windows runs uninstrumented (faster) and uncounted.
// Collection covers every thread, not only the caller's. The zero Window is
// ready; outside Valgrind its methods cost a few instructions and do nothing.
// Start and Stop may be called from different goroutines.
type Window struct{ open atomic.Bool }

// Start opens the window; a second Start before Stop does nothing.
func (w *Window) Start() {
	if !Running() || !w.open.CompareAndSwap(false, true) {
		return
	}
	do(reqStartInstr)
	do(reqToggleCollect)
}

// Stop closes the window; it does nothing when the window is not open, so a
// deferred Stop after an explicit one is harmless.
func (w *Window) Stop() {
	if !w.open.CompareAndSwap(true, false) {
		return
	}
	do(reqToggleCollect)
	do(reqStopInstr)
}
