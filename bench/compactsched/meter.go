package compactsched

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"golang.org/x/sys/unix"
)

// Meter measures the CPU time of compactions, so that a job can report
// apart the compactions the engine would run elsewhere (on compactor nodes).
// rusage cannot tell goroutines apart, but the kernel counts each OS thread's time
// on a CPU (its thread CPU clock): Pebble runs each compaction on
// a goroutine of its own and calls CompactionBegin and CompactionEnd from it, so
// the meter locks that goroutine to its thread from begin to end, and a
// compaction's CPU is its thread's time in between; a running one's is read from
// its thread so far, so that a job's window holds exactly its share.
//
// A compaction's sstable writer copies finished blocks to the file on a second
// goroutine (not small: 190–650 ns of a 10⁶-row job's cpu-ns/row, README
// "Offloaded compactions"). Pebble calls its grant handle's MeasureCPU from that
// goroutine when it starts and after each block, so offloaded compactions get a
// scheduler of the meter's (Offload) whose handles lock the writer to its
// thread at the first call and count the thread's time between calls.
//
// What stays the job's: the work before CompactionBegin (picking the compaction),
// a writer's work after its last block (closing its loop), and the garbage
// collection that the compactions' allocations cause.
type Meter struct {
	mu      sync.Mutex
	running map[int]threadMark
	ended   time.Duration // the CPU of the compactions that ended, and of writers so far
	err     error         // the first failed read of a thread's time
}

// threadMark is a running compaction's thread and its CPU time when it began.
type threadMark struct {
	tid  int
	from time.Duration
}

// Offload meters the compactions of the DB opened with opts: it sets their
// listeners to a meter's, which lock each compaction's goroutine to its thread
// from CompactionBegin to CompactionEnd, and their scheduler to one whose grant
// handles meter the writers. The two go together: the listeners alone miss the
// writers.
func Offload(opts *pebble.Options) *Meter {
	m := &Meter{running: map[int]threadMark{}}
	opts.EventListener.CompactionBegin = m.begin
	opts.EventListener.CompactionEnd = m.end
	opts.Experimental.CompactionScheduler = newScheduler(m)
	return m
}

func (m *Meter) begin(info pebble.CompactionInfo) {
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

func (m *Meter) end(info pebble.CompactionInfo) {
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

// writerStep meters a compaction's writer goroutine, the caller, at one of its
// MeasureCPU calls; writers holds the threads of the compaction's writers and their
// time at their last call. The first call locks the goroutine to its thread for the
// rest of its life (the thread ends with it), so that its thread's time is its own;
// each later call adds the time since the one before.
func (m *Meter) writerStep(writers map[int]time.Duration) {
	runtime.LockOSThread() // nests; undone below unless this is the first call
	tid := unix.Gettid()
	cpu, err := threadCPU(tid)
	m.mu.Lock()
	defer m.mu.Unlock()
	last, seen := writers[tid]
	if seen {
		runtime.UnlockOSThread()
	}
	if err != nil {
		m.fail(err)
		return
	}
	if seen {
		m.ended += cpu - last
	}
	writers[tid] = cpu
}

func (m *Meter) fail(err error) {
	if m.err == nil {
		m.err = fmt.Errorf("compactsched: measure the CPU of compactions: %w", err)
	}
}

// Total is the CPU time of every compaction so far, running ones included.
func (m *Meter) Total() (time.Duration, error) {
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

// scheduler is the CompactionScheduler of offloaded compactions: Pebble's
// default policy (as many compactions at once as the DB allows without asking,
// granted again when one ends, when Pebble says its allowance may have grown, and
// every 100 ms), with grant handles that meter the compactions' writer goroutines.
type scheduler struct {
	meter *Meter
	db    pebble.DBForCompaction // set by Register, before any other call

	poke    chan struct{} // asks the granter to grant
	stop    chan struct{}
	stopped chan struct{}

	mu      sync.Mutex
	running int
	closed  bool
}

var _ pebble.CompactionScheduler = (*scheduler)(nil)

// newScheduler returns a scheduler for one DB whose compactions' writers m meters.
func newScheduler(m *Meter) *scheduler {
	return &scheduler{meter: m, poke: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
}

// Register implements pebble.CompactionScheduler.
func (s *scheduler) Register(_ int, db pebble.DBForCompaction) {
	s.db = db
	go s.granter()
}

// Unregister implements pebble.CompactionScheduler: no grant calls into the DB
// after it returns.
func (s *scheduler) Unregister() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	close(s.stop)
	<-s.stopped
}

// TrySchedule implements pebble.CompactionScheduler.
func (s *scheduler) TrySchedule() (bool, pebble.CompactionGrantHandle) {
	if !s.take() {
		return false, nil
	}
	return true, s.newGrant()
}

// take takes a slot for one more compaction, if the DB's allowance has one left.
func (s *scheduler) take() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.running >= s.db.GetAllowedWithoutPermission() {
		return false
	}
	s.running++
	return true
}

// UpdateGetAllowedWithoutPermission implements pebble.CompactionScheduler: the
// granter looks again (the DB may hold its locks here, so not this call).
func (s *scheduler) UpdateGetAllowedWithoutPermission() { s.wake() }

func (s *scheduler) wake() {
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

// granter grants the waiting compactions the DB's allowance leaves room for, when
// woken and every 100 ms, until Unregister.
func (s *scheduler) granter() {
	defer close(s.stopped)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-s.poke:
		case <-tick.C:
		}
		s.grant()
	}
}

func (s *scheduler) grant() {
	for s.take() { // taken before asking, so TrySchedule cannot take it too
		if waiting, _ := s.db.GetWaitingCompaction(); !waiting || !s.db.Schedule(s.newGrant()) {
			s.release()
			return
		}
	}
}

func (s *scheduler) release() {
	s.mu.Lock()
	s.running--
	s.mu.Unlock()
}

func (s *scheduler) newGrant() *grant {
	return &grant{s: s, writers: map[int]time.Duration{}}
}

// grant is one compaction's grant handle.
type grant struct {
	s       *scheduler
	writers map[int]time.Duration // its writers' threads (the meter's mu guards it)
}

// Started and CumulativeStats implement pebble.CompactionGrantHandle.
func (g *grant) Started()                                          {}
func (g *grant) CumulativeStats(pebble.CompactionGrantHandleStats) {}

// MeasureCPU implements pebble.CompactionGrantHandle: the writers are metered
// here; the compaction's own goroutine from CompactionBegin to CompactionEnd.
func (g *grant) MeasureCPU(kind pebble.CompactionGoroutineKind) {
	if kind != pebble.CompactionGoroutinePrimary {
		g.s.meter.writerStep(g.writers)
	}
}

// Done implements pebble.CompactionGrantHandle: the compaction ended, and its
// slot goes to a waiting one.
func (g *grant) Done() {
	g.s.release()
	g.s.wake()
}
