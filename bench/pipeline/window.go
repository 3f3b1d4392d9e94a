package pipeline

import (
	"runtime"

	"github.com/backfill-bench/backfill-bench/internal/callgrind"
)

// openWindow opens the callgrind window of a job (harness --measure instructions):
// from the job's start to its final commit, without loading A, verification or
// settling. Under Valgrind it first collects the garbage of the load, so that with
// GOGC=off every job starts from the same heap; outside Valgrind it does nothing.
func openWindow() *callgrind.Window {
	w := &callgrind.Window{}
	if callgrind.Running() {
		runtime.GC()
		w.Start()
	}
	return w
}
