package runner

import (
	"os/exec"
	"syscall"
	"time"
)

// gracefully makes cmd run in a process group of its own and, when its context is
// done, interrupt the whole group (a bench binary, or `go test -c` and the compiler
// it started) and give it grace to clean up before it is killed. A terminal's ^C
// reaches the group of benchrun only; benchrun passes it on this way, so children
// never outlive it.
func gracefully(cmd *exec.Cmd, grace time.Duration) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	cmd.WaitDelay = grace
}
