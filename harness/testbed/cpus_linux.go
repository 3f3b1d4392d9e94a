package testbed

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// PinSupported checks that this process may pin processes to CPUs and has at
// least two to pin to (a duet's halves).
func PinSupported() error {
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

// CPUs are the CPUs this process may use, in order.
func CPUs() []int {
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

// Pin pins every thread of the process to cpus. Threads come and go; one
// started since is pinned at the next call (a new thread inherits its creator's
// CPUs meanwhile), one gone is no error. The error is the main thread's.
func Pin(pid int, cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return nil // exited
	}
	var leader error
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			if err := unix.SchedSetaffinity(tid, &set); tid == pid && err != unix.ESRCH {
				leader = err
			}
		}
	}
	return leader
}
