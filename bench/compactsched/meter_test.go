package compactsched

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestThreadCPUReadsTheThreadsClock: threadCPU, read from another thread, is the
// CPU time the kernel counts for the thread (the first field of its schedstat),
// and grows by the CPU the thread spends (as the thread reads its own clock).
func TestThreadCPUReadsTheThreadsClock(t *testing.T) {
	tids, spin, done := make(chan int), make(chan struct{}), make(chan struct{})
	go func() {
		runtime.LockOSThread() // parked while it waits: the thread sleeps, its time stands
		defer runtime.UnlockOSThread()
		tids <- unix.Gettid()
		<-spin
		for start := ownCPU(); ownCPU()-start < 20*time.Millisecond; { // on a busy machine too
		}
		tids <- 0
		<-done
	}()
	tid := <-tids
	before, err := threadCPU(tid)
	if err != nil {
		t.Fatal(err)
	}
	close(spin)
	<-tids
	time.Sleep(5 * time.Millisecond) // let it park
	after, err := threadCPU(tid)
	if err != nil {
		t.Fatal(err)
	}
	stat, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/schedstat")
	close(done)
	if err != nil {
		t.Skipf("no schedstat to compare with: %v", err)
	}
	field, _, _ := bytes.Cut(stat, []byte(" "))
	ns, err := strconv.ParseInt(string(field), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if d := after - time.Duration(ns); d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("threadCPU %v, schedstat %v: they should agree", after, time.Duration(ns))
	}
	if spent := after - before; spent < 20*time.Millisecond {
		t.Errorf("the thread spent 20 ms of CPU but threadCPU grew by %v", spent)
	}
}

// ownCPU is the calling thread's CPU time, as the thread reads its own clock.
func ownCPU() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}
