package pipeline

import (
	"runtime"

	"github.com/backfill-bench/backfill-bench/internal/callgrind"
)

// openWindow opens the callgrind window of a job (harness --measure instructions):
// from the job's start to its final commit, without loading A, verification or
// settling. It first collects the garbage of the load, before the job's clock
// starts, as every timed job does (StartWindow), so that with GOGC=off under
// Valgrind every job starts from the same heap.
func openWindow() *callgrind.Window {
	StartWindow()
	w := &callgrind.Window{}
	if callgrind.Running() {
		w.Start()
	}
	return w
}

// StartWindow readies the process for a timed job, the backfill's or a baseline's:
// it collects the garbage of what ran before (the load), which is not the job's
// to collect, so that every job starts from a heap that holds what it reads and
// the memory the load freed.
func StartWindow() { runtime.GC() }
