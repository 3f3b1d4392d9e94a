package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
)

// duetSupported checks that this process may pin processes to CPUs and has at
// least two to pin to.
func duetSupported() error {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return fmt.Errorf("reading this process's CPUs: %w", err)
	}
	if set.Count() < 2 {
		return fmt.Errorf("a duet needs 2 CPUs, this process may use %d", set.Count())
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil { // a no-op that needs the permission
		return fmt.Errorf("pinning to CPUs: %w", err)
	}
	return nil
}

// duetCPUs are the CPUs this process may use, in order.
func duetCPUs() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var cpus []int
	for c := 0; len(cpus) < set.Count(); c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// runDuet runs the trials a and b at once (see Duet): both processes load their
// tables, the gate opens when both are ready, and until both have exited they
// trade their halves of the CPUs every duetSwap. A process that fails before the
// gate leaves its partner to run alone.
func (p *pass) runDuet(ctx context.Context, prof profile.Profile, a, b Trial) []outcome {
	trials := []Trial{a, b}
	outs := make([]outcome, 2)
	jobs := make([]*job, 2)
	ready := make([]*os.File, 2)
	gate := make([]*os.File, 2)
	procs := duetProcs(prof)
	for i, t := range trials {
		j, o := p.newJob(ctx, p.sides[t.Side], prof, t)
		if j == nil {
			outs[i] = o
			continue
		}
		defer j.cancel()
		j.cmd.Args = append(j.cmd.Args, "-"+contract.FlagStartGate)
		j.cmd.Env = append(j.cmd.Env, "GOMAXPROCS="+strconv.Itoa(procs)) // the last value of a key wins
		readyR, readyW, err1 := os.Pipe()
		goR, goW, err2 := os.Pipe()
		if err := errors.Join(err1, err2); err != nil {
			outs[i] = j.outcome(ctx, fmt.Errorf("start gate: %w", err))
			continue
		}
		j.cmd.ExtraFiles = []*os.File{readyW, goR} // descriptors 3 and 4: contract.GateReadyFD, GateGoFD
		err := j.cmd.Start()
		readyW.Close()
		goR.Close()
		if err != nil {
			readyR.Close()
			goW.Close()
			outs[i] = j.outcome(ctx, err)
			continue
		}
		jobs[i], ready[i], gate[i] = j, readyR, goW
	}
	// Wait until both are ready or gone (a process that exits closes its end).
	for i, j := range jobs {
		if j != nil {
			io.ReadFull(ready[i], make([]byte, 1))
			ready[i].Close()
		}
	}
	cpus := duetCPUs()
	halves := [2][]int{cpus[:procs], cpus[procs : 2*procs]}
	pin := func(flip int) {
		for i, j := range jobs {
			if j != nil {
				pinProcess(j.cmd.Process.Pid, halves[i^flip])
			}
		}
	}
	pin(0)
	for i, j := range jobs {
		if j != nil {
			gate[i].Write([]byte{1}) // a process gone by now fails its own way
			gate[i].Close()
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
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
	})
	for i, j := range jobs {
		if j != nil {
			outs[i] = j.outcome(ctx, j.cmd.Wait())
		}
	}
	close(done)
	wg.Wait()
	return outs
}

// pinProcess pins every thread of the process to cpus. Threads come and go; one
// started since is pinned at the next call (a new thread inherits its creator's
// CPUs meanwhile), one gone is no error.
func pinProcess(pid int, cpus []int) {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return // exited
	}
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			unix.SchedSetaffinity(tid, &set)
		}
	}
}
