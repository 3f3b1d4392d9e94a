package storage

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"golang.org/x/sys/unix"
)

// compactionMeter measures the CPU time of compactions, so that a job can report
// apart the compactions the engine would run elsewhere (on compactor nodes).
// rusage cannot tell goroutines apart, but the kernel counts each OS thread's time
// on a CPU (/proc/self/task/TID/schedstat, in ns): Pebble runs each compaction on
// a goroutine of its own and calls CompactionBegin and CompactionEnd from it, so
// the meter locks that goroutine to its thread from begin to end, and a
// compaction's CPU is its thread's time in between; a running one's is read from
// its thread so far, so that a job's window holds exactly its share.
//
// What stays the job's: the work before CompactionBegin (picking the compaction),
// the sstable writer's second goroutine (it copies finished blocks to the file),
// and the garbage collection that the compactions' allocations cause.
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

// threadCPU reads a thread of this process's time on a CPU: the first field of its
// schedstat, in nanoseconds.
func threadCPU(tid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/schedstat")
	if err != nil {
		return 0, err
	}
	field, _, _ := bytes.Cut(b, []byte(" "))
	ns, err := strconv.ParseInt(string(field), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("thread %d's schedstat %q: %w", tid, b, err)
	}
	return time.Duration(ns), nil
}
