package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestJobCommand: the command a Job builds, for every kind of launch.
func TestJobCommand(t *testing.T) {
	for _, tc := range []struct {
		name     string
		job      Job
		wantPath string   // base name of the program started
		wantArgs []string // after the program's name
		wantEnv  []string // the last values of these keys
	}{
		{"trial", Job{Binary: "/b/bench.test", Args: []string{"-test.bench", "^BenchmarkBackfill$"}, CPUs: 2, Dir: "/out"},
			"bench.test", []string{"-test.bench", "^BenchmarkBackfill$"}, []string{"GOMAXPROCS=2"}},
		{"duet run", Job{Binary: "/b/bench.test", Args: []string{"-rows", "10"}, Diagnostics: []string{"-start-gate"}, CPUs: 1},
			"bench.test", []string{"-rows", "10", "-start-gate"}, []string{"GOMAXPROCS=1"}},
		{"profiled", Job{Binary: "/b/bench.test", Args: []string{"-rows", "10"}, Diagnostics: []string{"-test.cpuprofile", "/p/cpu.pprof"}, Env: []string{"A=1"}},
			"bench.test", []string{"-rows", "10", "-test.cpuprofile", "/p/cpu.pprof"}, []string{"A=1"}},
		{"counted", Job{Binary: "/b/bench.test", Args: []string{"-rows", "10"}, CPUs: 2, Callgrind: "/t/x.callgrind.out"},
			"valgrind", []string{"--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=/t/x.callgrind.out", "/b/bench.test", "-rows", "10"},
			[]string{"GOMAXPROCS=1", "GOGC=off", "GODEBUG=cpu.rdtscp=off,asyncpreemptoff=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.job.Process(context.Background())
			defer p.Close()
			if filepath.Base(p.Args[0]) != tc.wantPath || !slices.Equal(p.Args[1:], tc.wantArgs) {
				t.Errorf("command %q, want %s %q", p.Args, tc.wantPath, tc.wantArgs)
			}
			if p.Dir != tc.job.Dir {
				t.Errorf("dir %q, want %q", p.Dir, tc.job.Dir)
			}
			last := map[string]string{}
			for _, kv := range p.Env {
				k, v, _ := strings.Cut(kv, "=")
				last[k] = v
			}
			for _, kv := range tc.wantEnv {
				k, v, _ := strings.Cut(kv, "=")
				if last[k] != v {
					t.Errorf("environment %s=%q, want %q", k, last[k], v)
				}
			}
			if p.SysProcAttr == nil || !p.SysProcAttr.Setpgid || p.Cancel == nil {
				t.Error("the job does not run in a process group of its own, cancelled as a whole")
			}
			if d, ok := p.ctx.Deadline(); !ok || time.Until(d) < DefaultTimeout-time.Minute {
				t.Errorf("deadline %v: want DefaultTimeout from now", d)
			}
		})
	}
}

// TestJobTimeoutKillsTheGroup: a job past its timeout fails with ErrTimeout, and
// what it started goes with it, even a child that ignores the interrupt.
func TestJobTimeoutKillsTheGroup(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	// The background child of a non-interactive shell ignores SIGINT: only the
	// group's SIGKILL after Grace ends it.
	script := `sleep 300 & echo $! > "$1"; wait`
	err := Job{Binary: "/bin/sh", Args: []string{"-c", script, "sh", pidFile}, Timeout: 300 * time.Millisecond}.Run(context.Background())
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("error %v, want ErrTimeout", err)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if alive(pid, 5*time.Second) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the job's child %d outlived the job", pid)
	}
}

// TestJobCancelKillsTheGroup: ctx's end (benchrun interrupted) stops the job and
// its children alike.
func TestJobCancelKillsTheGroup(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	ctx, cancel := context.WithCancel(context.Background())
	script := `sleep 300 & echo $! > "$1"; wait`
	p := Job{Binary: "/bin/sh", Args: []string{"-c", script, "sh", pidFile}}.Process(ctx)
	defer p.Close()
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for pid == 0 {
		data, _ := os.ReadFile(pidFile)
		if s := strings.TrimSpace(string(data)); strings.HasSuffix(string(data), "\n") {
			pid, _ = strconv.Atoi(s)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := p.Err(p.Wait()); err == nil || errors.Is(err, ErrTimeout) {
		t.Errorf("error %v, want the interrupted job's", err)
	}
	// The shell leaves at the SIGINT; its background sleep ignores SIGINT (as
	// POSIX shells set it up), so only the group's SIGKILL Grace later ends it.
	if alive(pid, Grace+5*time.Second) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the job's child %d outlived the job", pid)
	}
}

// alive reports whether pid is still a live process after within: the time a
// SIGKILL on its way to it has to land.
func alive(pid int, within time.Duration) bool {
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if !running(pid) {
			return false
		}
	}
	return running(pid)
}

// running reports whether pid is a process that has not exited (a zombie waiting
// for a parent that does not reap counts as exited).
func running(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}
