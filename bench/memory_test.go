package bench_test

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/backfill-bench/backfill-bench/internal/callgrind"
)

// keepFreedMemory re-executes the bench binary with GODEBUG=madvdontneed=0 added,
// unless GODEBUG already sets madvdontneed or the binary runs under Valgrind (which
// would not follow the exec). By default Go gives the heap pages it has freed back
// to the OS with MADV_DONTNEED, and the next job that reuses them pays a page fault
// for each one: a 10⁶-row engine job after a warm-up met 73–87 k of them, for memory
// the process had already held, and used half as much CPU again as with MADV_FREE,
// where the pages stay mapped until the kernel needs them (1–2 k faults), as a
// resident engine process keeps its memory (README "Freed memory, kept mapped").
// The setting is read only at start-up, hence the exec.
func keepFreedMemory() error {
	godebug := os.Getenv("GODEBUG")
	if strings.Contains(godebug, "madvdontneed=") || callgrind.Running() {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("bench: re-executing with GODEBUG=madvdontneed=0: %w; set it in the environment instead", err)
	}
	if godebug != "" {
		godebug += ","
	}
	env := []string{"GODEBUG=" + godebug + "madvdontneed=0"} // the first of a key counts
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GODEBUG=") {
			env = append(env, kv)
		}
	}
	if err := syscall.Exec(exe, os.Args, env); err != nil {
		return fmt.Errorf("bench: re-executing %s with GODEBUG=madvdontneed=0: %w; set it in the environment instead", exe, err)
	}
	return nil // not reached: Exec replaced the process
}

func TestFreedMemoryStaysMapped(t *testing.T) {
	if godebug := os.Getenv("GODEBUG"); !strings.Contains(godebug, "madvdontneed=") {
		t.Fatalf("GODEBUG=%q: TestMain should have re-executed the bench binary with madvdontneed=0 (keepFreedMemory)", godebug)
	}
}
