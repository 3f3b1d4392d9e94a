package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/harness/testbed"
)

// runDuet runs the trials a and b at once (see Duet): both processes load their
// tables, the gate opens when both are ready or gone, and until both have exited
// they trade their halves of the CPUs every duetSwap. Each run's outcome is read
// as soon as it exits, so a partner that runs long or is interrupted later costs it
// nothing. A process that fails before the gate leaves its partner to run alone; one
// that hangs while loading keeps its partner at the gate until the timeout. The bool
// is false if the two ran back to back instead.
func (p *pass) runDuet(ctx context.Context, prof profile.Profile, a, b Trial) ([]outcome, bool) {
	procs := duetProcs(prof)
	cpus := testbed.CPUs()
	if len(cpus) < 2*procs { // the CPUs this process may use shrank since the pass began
		return []outcome{p.runOne(ctx, p.sides[a.Side], prof, a), p.runOne(ctx, p.sides[b.Side], prof, b)}, false
	}
	halves := [2][]int{cpus[:procs], cpus[procs : 2*procs]}
	trials := []Trial{a, b}
	outs := make([]outcome, 2)
	var started [2]*job
	var gates [2]*os.File
	var ready [2]chan struct{} // closed when the process is ready or gone
	var mu sync.Mutex          // guards exited against pinning a PID that may be reused
	var exited, warned [2]bool
	var wg sync.WaitGroup
	for i, t := range trials {
		j, o := p.newJob(ctx, p.sides[t.Side], prof, t, procs)
		if j == nil {
			outs[i] = o
			continue
		}
		defer j.proc.Close()
		readyR, readyW, err := os.Pipe()
		if err != nil {
			outs[i] = j.outcome(ctx, fmt.Errorf("start gate: %w", err))
			continue
		}
		goR, goW, err := os.Pipe()
		if err != nil {
			readyR.Close()
			readyW.Close()
			outs[i] = j.outcome(ctx, fmt.Errorf("start gate: %w", err))
			continue
		}
		j.proc.ExtraFiles = []*os.File{readyW, goR} // descriptors 3 and 4: gate.ReadyFD, gate.GoFD
		err = j.proc.Start()
		readyW.Close()
		goR.Close()
		if err != nil {
			readyR.Close()
			goW.Close()
			outs[i] = j.outcome(ctx, err)
			continue
		}
		started[i], gates[i], ready[i] = j, goW, make(chan struct{})
		wg.Go(func() { // a byte, or EOF when the process exits
			io.ReadFull(readyR, make([]byte, 1))
			readyR.Close()
			close(ready[i])
		})
		wg.Go(func() {
			// Wait for the exit without reaping, so the PID stays this process's until
			// pinning has stopped for it; then reap.
			var info unix.Siginfo
			for unix.Waitid(unix.P_PID, j.proc.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
			}
			mu.Lock()
			exited[i] = true
			mu.Unlock()
			outs[i] = j.outcome(ctx, j.proc.Wait())
		})
	}
	pin := func(flip int) {
		mu.Lock()
		defer mu.Unlock()
		for i, j := range started {
			if j == nil || exited[i] {
				continue
			}
			if err := testbed.Pin(j.proc.Process.Pid, halves[i^flip]); err != nil && !warned[i] {
				warned[i] = true
				p.cfg.Logger.Warn("duet: pinning a run to its CPUs failed; its figures are not a duet's", "run", j.t.Index, "error", err)
			}
		}
	}
	for i := range started {
		if started[i] != nil {
			<-ready[i]
		}
	}
	pin(0)
	for i := range started {
		if started[i] != nil {
			gates[i].Write([]byte{1}) // a process gone by now fails its own way
			gates[i].Close()
		}
	}
	done := make(chan struct{})
	swapped := make(chan struct{})
	go func() {
		defer close(swapped)
		tick := time.NewTicker(duetSwap)
		defer tick.Stop()
		for flip := 1; ; flip ^= 1 {
			select {
			case <-done:
				return
			case <-tick.C:
				pin(flip)
			}
		}
	}()
	wg.Wait()
	close(done)
	<-swapped
	return outs, true
}
