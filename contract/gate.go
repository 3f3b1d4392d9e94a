package contract

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// The start gate lines up the timed jobs of two bench processes that run at once
// (a duet): each loads its tables, says so on GateReadyFD and waits on GateGoFD,
// and the harness opens the gate when both are ready. The descriptors are the
// first two of exec.Cmd.ExtraFiles.
const (
	GateReadyFD = 3
	GateGoFD    = 4
)

// AwaitStart is the bench process's side of the start gate: one byte out, then
// block until a byte comes in. The gate opens once per process; later calls return
// the first one's error. An error means the harness is gone or did not pass the
// gate's descriptors.
func AwaitStart() error { return awaitStart() }

var awaitStart = sync.OnceValue(func() error {
	ready := os.NewFile(GateReadyFD, "start-gate-ready")
	start := os.NewFile(GateGoFD, "start-gate-go")
	defer ready.Close()
	defer start.Close()
	if _, err := ready.Write([]byte{1}); err != nil {
		return fmt.Errorf("start gate: signal ready on descriptor %d: %w", GateReadyFD, err)
	}
	var b [1]byte
	if _, err := io.ReadFull(start, b[:]); err != nil {
		return fmt.Errorf("start gate: wait on descriptor %d: %w", GateGoFD, err)
	}
	return nil
})
