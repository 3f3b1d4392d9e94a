package pipeline

import (
	"runtime"

	"github.com/backfill-bench/backfill-bench/internal/callgrind"
)

// openWindow opens the callgrind window of a job (harness --measure instructions):
// from the job's start to its final commit, without loading A, verification or
// settling; it starts after StartWindow, so that with GOGC=off under Valgrind
// every job starts from the same heap.
func openWindow() *callgrind.Window {
	StartWindow()
	w := &callgrind.Window{}
	if callgrind.Running() {
		w.Start()
	}
	return w
}

// StartWindow readies the process for a timed job, the backfill's or a baseline's:
// it collects the garbage of the load before the clock starts (not the job's).
func StartWindow() { runtime.GC() }
