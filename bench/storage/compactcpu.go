package storage

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"golang.org/x/sys/unix"
)

// compactionMeter measures the CPU time of compactions, so that a job can report
// apart the compactions the engine would run elsewhere (on compactor nodes).
// rusage cannot tell goroutines apart, but the kernel counts each OS thread's time
// on a CPU (its thread CPU clock): Pebble runs each compaction on
// a goroutine of its own and calls CompactionBegin and CompactionEnd from it, so
// the meter locks that goroutine to its thread from begin to end, and a
// compaction's CPU is its thread's time in between; a running one's is read from
// its thread so far, so that a job's window holds exactly its share.
//
// What stays the job's: the work before CompactionBegin (picking the compaction),
// the sstable writer's second goroutine (it copies finished blocks to the file:
// not small, 190–650 ns of a 10⁶-row job's cpu-ns/row, README "Offloaded
// compactions"), and the garbage collection that the compactions' allocations cause.
type compactionMeter struct {
	mu      sync.Mutex
	running map[int]threadMark
	ended   time.Duration // the CPU of the compactions that ended
	err     error         // the first failed read of a thread's time
}

// threadMark is a running compaction's thread and its CPU time when it began.
type threadMark struct {
	tid  int
	from time.Duration
}

func (m *compactionMeter) listen(l *pebble.EventListener) {
	m.running = map[int]threadMark{}
	l.CompactionBegin = m.begin
	l.CompactionEnd = m.end
}

func (m *compactionMeter) begin(info pebble.CompactionInfo) {
	runtime.LockOSThread()
	tid := unix.Gettid()
	cpu, err := threadCPU(tid)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.fail(err)
		return
	}
	m.running[info.JobID] = threadMark{tid, cpu}
}

func (m *compactionMeter) end(info pebble.CompactionInfo) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mark, ok := m.running[info.JobID]
	if !ok { // its begin failed to read the thread
		runtime.UnlockOSThread()
		return
	}
	delete(m.running, info.JobID)
	cpu, err := threadCPU(mark.tid)
	runtime.UnlockOSThread()
	if err != nil {
		m.fail(err)
		return
	}
	m.ended += cpu - mark.from
}

func (m *compactionMeter) fail(err error) {
	if m.err == nil {
		m.err = fmt.Errorf("storage: measure the CPU of compactions: %w", err)
	}
}

// total is the CPU time of every compaction so far, running ones included.
func (m *compactionMeter) total() (time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.ended
	for _, mark := range m.running {
		cpu, err := threadCPU(mark.tid)
		if err != nil {
			m.fail(err)
			continue
		}
		t += cpu - mark.from
	}
	return t, m.err
}

// threadCPU reads a thread of this process's time on a CPU from the kernel's CPU
// clock of that thread (the clock id pthread_getcpuclockid gives: the inverted
// TID shifted by 3, per-thread and sched bits set): one system call. The job's
// collector reads it at every commit, on the job's own time.
func threadCPU(tid int) (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(int32(^tid<<3|cpuClockPerThread|cpuClockSched), &ts); err != nil {
		return 0, fmt.Errorf("thread %d's CPU clock: %w", tid, err)
	}
	return time.Duration(ts.Nano()), nil
}

// The bits of a thread's CPU clock id (the kernel's CPUCLOCK_PERTHREAD_MASK and
// CPUCLOCK_SCHED).
const (
	cpuClockPerThread = 4
	cpuClockSched     = 2
)
