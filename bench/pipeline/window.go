package pipeline

import (
	"runtime"

	"github.com/backfill-bench/backfill-bench/internal/callgrind"
)

// openWindow opens a job's callgrind window (harness --measure instructions): from
// its start to its final commit, without loading A, verification or settling; after
// StartWindow, so that with GOGC=off under Valgrind every job starts from one heap.
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
