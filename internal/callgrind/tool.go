package callgrind

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
)

// Env is what a counted process's environment must add, and why:
//   - cpu.rdtscp=off: Valgrind does not decode RDTSCP, which the runtime uses for
//     its tick counter (SIGILL otherwise);
//   - GOMAXPROCS=1: with more, idle Ps spin for a time that depends on the host, and
//     that spinning is counted;
//   - asyncpreemptoff=1: preemption signals come by wall time, so how many arrive
//     (and what they cost) depends on the host's speed;
//   - GOGC=off: with one P the collector's background work is paced by time slices,
//     so its cost moved counts by up to 5.5 % under load. Its cost leaves the count;
//     allocations are still judged by job-allocs/op.
func Env() []string {
	return []string{"GODEBUG=cpu.rdtscp=off,asyncpreemptoff=1", "GOMAXPROCS=1", "GOGC=off"}
}

// BuildEnv is what the go command's environment adds to build a counted binary:
// CGO_ENABLED=0, so that Pebble allocates its memtables and caches with Go's
// allocator, not C's calloc (whose clearing cost varied with the pages it got:
// ~0.07 % of a window, run to run).
func BuildEnv() []string { return []string{"CGO_ENABLED=0"} }

// Options are the callgrind options of a counted run besides its output file:
// nothing is instrumented until a Window starts.
func Options() []string {
	return []string{"--tool=callgrind", "--instr-atstart=no"}
}

// Settings describes Env and Options in one line, for the results' config: counts
// taken with other settings are not comparable.
func Settings() string {
	return strings.Join(append(append(Options(), Env()...), BuildEnv()...), " ")
}

// Check says whether this machine can count instructions: Linux on amd64 or arm64
// with valgrind on PATH. It returns valgrind's version ("valgrind-3.19.0").
func Check(ctx context.Context) (version string, err error) {
	if runtime.GOOS != "linux" || !Supported {
		return "", fmt.Errorf("--measure instructions needs Linux on amd64 or arm64 (callgrind client requests are built only there); this is %s/%s: use --measure time", runtime.GOOS, runtime.GOARCH)
	}
	path, err := exec.LookPath("valgrind")
	if err != nil {
		return "", errors.New("--measure instructions needs valgrind, which is not on PATH: install it from the distribution's packages (Debian/Ubuntu: apt-get install valgrind)")
	}
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("--measure instructions: %s --version: %w", path, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Command returns the argument list that runs binary with args under callgrind,
// writing its windows' counts to outFile.1, outFile.2, … (and the rest of the
// process's to outFile); the caller adds Env to the environment.
func Command(outFile, binary string, args []string) []string {
	cmd := append(Options(), "--callgrind-out-file="+outFile, binary)
	return append(cmd, args...)
}

// ReadWindows sums the instructions of the windows a run with outFile counted:
// the dumps outFile.1, outFile.2, … that a client request (Window.Stop) made.
func ReadWindows(outFile string) (total uint64, windows int, err error) {
	total, _, windows, err = ReadWindowsApart(outFile, nil, nil)
	return total, windows, err
}

// ReadWindowsApart is ReadWindows that also sums, apart, the instructions the
// windows spent in the functions apart selects and their share of helpers
// (Costs.Within); they are part of total. With apart nil, apartTotal is 0.
func ReadWindowsApart(outFile string, apart func(fn string) bool, helpers []string) (total uint64, apartTotal float64, windows int, err error) {
	for n := 1; ; n++ {
		name := outFile + "." + strconv.Itoa(n)
		if _, err := os.Stat(name); errors.Is(err, os.ErrNotExist) {
			return total, apartTotal, windows, nil
		}
		d, err := readDump(name)
		if err != nil {
			return 0, 0, 0, err
		}
		if d.trigger != "Client Request" {
			continue // a dump of another cause (callgrind_control): not a window
		}
		total += d.total
		windows++
		if apart != nil {
			c, err := ReadCosts(name)
			if err != nil {
				return 0, 0, 0, err
			}
			apartTotal += c.Within(apart, helpers)
		}
	}
}

type dump struct {
	total   uint64 // event Ir
	trigger string // "Client Request", "Program termination", …
}

// readDump reads a callgrind output file's total instructions (event Ir) and
// what made callgrind write it. The "totals:" line has the count; callgrind 3.19
// writes a "summary:" line before it that can differ, so that one counts only
// without a totals line.
func readDump(name string) (dump, error) {
	f, err := os.Open(name)
	if err != nil {
		return dump{}, fmt.Errorf("callgrind output: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var d dump
	events, total := "", ""
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "events:"); ok {
			events = strings.TrimSpace(v)
		} else if v, ok := strings.CutPrefix(line, "desc: Trigger:"); ok {
			d.trigger, _, _ = strings.Cut(strings.TrimSpace(v), ":")
		} else if v, ok := strings.CutPrefix(line, "totals:"); ok {
			total = v
		} else if v, ok := strings.CutPrefix(line, "summary:"); ok && total == "" {
			total = v
		}
	}
	if err := sc.Err(); err != nil {
		return d, fmt.Errorf("callgrind output %s: %w", name, err)
	}
	if total == "" {
		return d, fmt.Errorf("callgrind output %s: no totals line: did valgrind finish?", name)
	}
	if first, _, _ := strings.Cut(events, " "); first != "Ir" {
		return d, fmt.Errorf("callgrind output %s: the first event is %q, not Ir", name, first)
	}
	fields := strings.Fields(total)
	if len(fields) == 0 {
		return d, fmt.Errorf("callgrind output %s: an empty totals line", name)
	}
	if d.total, err = strconv.ParseUint(fields[0], 10, 64); err != nil {
		return d, fmt.Errorf("callgrind output %s: totals %q: %w", name, total, err)
	}
	return d, nil
}
