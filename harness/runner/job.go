// Package runner launches bench binaries: it plans interleaved rounds and runs each
// trial, duet, counted run and extra as a Job in its own process group, keeping the
// results in memory and in the results directory.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/backfill-bench/backfill-bench/internal/callgrind"
)

// DefaultTimeout is how long one process of a bench binary may run before it is
// killed and recorded as failed: the one default of every launch and of --timeout.
const DefaultTimeout = 10 * time.Minute

// Grace is how long a job's process group has to clean up after an interrupt
// before it is killed.
const Grace = 5 * time.Second

// Job is one process of a bench binary, however it is launched (a pass's trial,
// either run of a duet, a counted run under callgrind, an extra after the cells, a
// compare's profiling run, the start-gate probe): Args are the contract's flags
// of what it runs, Diagnostics what it also records. It runs in a process group of
// its own, which a timeout or ctx interrupts as a whole and then kills.
type Job struct {
	Binary      string
	Args        []string      // what it runs: contract.Cell.Args, an Extra's
	Diagnostics []string      // after Args: -test.cpuprofile FILE, -start-gate …
	Dir         string        // its working directory ("": this process's)
	Env         []string      // added to this process's environment; a later value of a key wins
	CPUs        int           // its GOMAXPROCS (0: the machine's)
	Timeout     time.Duration // 0: DefaultTimeout
	Callgrind   string        // run under valgrind's callgrind, counts written to this file ("": not)
	Stdout      io.Writer
	Stderr      io.Writer
	ExtraFiles  []*os.File // descriptors 3, 4, …
}

// Process is a Job's process, made by Job.Process and not started.
type Process struct {
	*exec.Cmd
	ctx     context.Context // the job's ctx with its timeout
	cancel  context.CancelFunc
	timeout time.Duration
	mu      sync.Mutex
	kill    *time.Timer // the group's SIGKILL, after Grace
}

// ErrTimeout is the error of a job that ran past its timeout.
var ErrTimeout = errors.New("timeout")

// Process makes the job's command: the binary (or valgrind running it) with Args
// then Diagnostics, its environment, in a process group of its own. Release it
// with Close once waited for.
func (j Job) Process(ctx context.Context) *Process {
	timeout := j.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	p := &Process{timeout: timeout}
	p.ctx, p.cancel = context.WithTimeout(ctx, timeout)
	name, args := j.Binary, append(append([]string(nil), j.Args...), j.Diagnostics...)
	env := append(os.Environ(), j.Env...)
	if j.CPUs > 0 {
		env = append(env, "GOMAXPROCS="+strconv.Itoa(j.CPUs))
	}
	if j.Callgrind != "" {
		// Callgrind's settings come last: they override a profile's GOMAXPROCS.
		name, args = "valgrind", callgrind.Command(j.Callgrind, j.Binary, args)
		env = append(env, callgrind.Env()...)
	}
	cmd := exec.CommandContext(p.ctx, name, args...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = j.Dir, env, j.Stdout, j.Stderr, j.ExtraFiles
	inGroup(cmd, p.groupCancel)
	p.Cmd = cmd
	return p
}

// inGroup makes cmd run in a process group of its own, with cancel as what its
// context's end does. A terminal's ^C reaches the group of benchrun only; benchrun
// passes it on this way, so children (a bench binary, valgrind, `go test -c` and the
// compiler) never outlive it.
func inGroup(cmd *exec.Cmd, cancel func(*exec.Cmd) error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return cancel(cmd) }
	cmd.WaitDelay = 2 * Grace // then Wait closes the pipes a straggler still holds
}

// groupCancel interrupts the process group and kills it if it is not gone after
// Grace: the leader and whatever it started.
func (p *Process) groupCancel(cmd *exec.Cmd) error {
	pgid := cmd.Process.Pid
	p.mu.Lock()
	p.kill = time.AfterFunc(Grace, func() { syscall.Kill(-pgid, syscall.SIGKILL) })
	p.mu.Unlock()
	return syscall.Kill(-pgid, syscall.SIGINT)
}

// Close releases the timeout; a group still holding its ID is killed now.
func (p *Process) Close() {
	p.cancel()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.kill != nil && p.kill.Stop() && p.Process != nil {
		syscall.Kill(-p.Process.Pid, syscall.SIGKILL) // stragglers of a leader that left in time
	}
}

// Err is the job's outcome from the error of its Run or Wait: ErrTimeout
// (wrapped, with the timeout) if it ran past it, else err.
func (p *Process) Err(err error) error {
	if errors.Is(p.ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w after %v", ErrTimeout, p.timeout)
	}
	return err
}

// Run runs the job to its end; see Process.Err for the error.
func (j Job) Run(ctx context.Context) error {
	p := j.Process(ctx)
	defer p.Close()
	return p.Err(p.Run())
}

// BuildBench compiles the bench package's test binary of the checkout at dir. The
// go command's work directory goes into a temporary directory of ours (GOTMPDIR),
// removed afterwards however the build ends: an interrupted go leaves its own.
// env adds to the go command's environment (callgrind.BuildEnv for a counted
// binary).
func BuildBench(ctx context.Context, dir, out string, env ...string) error {
	tmp, err := os.MkdirTemp("", "backfill-bench-gotmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	p := &Process{}
	p.ctx, p.cancel = context.WithCancel(ctx)
	defer p.Close()
	p.Cmd = exec.CommandContext(p.ctx, "go", "test", "-c", "-o", out, "./bench/")
	p.Dir = dir
	p.Env = append(append(os.Environ(), "GOTMPDIR="+tmp), env...)
	inGroup(p.Cmd, p.groupCancel)
	if msg, err := p.CombinedOutput(); err != nil {
		return fmt.Errorf("building the bench binary in %s: %v\n%s", dir, err, msg)
	}
	return nil
}
