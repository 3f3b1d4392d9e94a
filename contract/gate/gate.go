// Package gate is the start gate of a duet: the bench process's side (AwaitStart)
// and the descriptors the harness passes it.
package gate

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// The start gate lines up the timed jobs of two bench processes that run at once
// (a duet): each loads its tables, says so on ReadyFD and waits on GoFD,
// and the harness opens the gate when both are ready. The descriptors are the
// first two of exec.Cmd.ExtraFiles.
const (
	ReadyFD = 3
	GoFD    = 4
)

// AwaitStart is the bench process's side of the start gate: one byte out, then
// block until a byte comes in. The gate opens once per process; later calls return
// the first one's error. An error means the harness is gone or did not pass the
// gate's descriptors.
func AwaitStart() error { return awaitStart() }

var awaitStart = sync.OnceValue(func() error {
	ready := os.NewFile(ReadyFD, "start-gate-ready")
	start := os.NewFile(GoFD, "start-gate-go")
	defer ready.Close()
	defer start.Close()
	if _, err := ready.Write([]byte{1}); err != nil {
		return fmt.Errorf("start gate: signal ready on descriptor %d: %w", ReadyFD, err)
	}
	var b [1]byte
	if _, err := io.ReadFull(start, b[:]); err != nil {
		return fmt.Errorf("start gate: wait on descriptor %d: %w", GoFD, err)
	}
	return nil
})
