// Package testbed inspects what a bench runs on and its results are attributed to:
// checkouts of this module and their git history, the machine and its room.
package testbed

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/backfill-bench/backfill-bench/contract"
)

// Checkout is a checkout of this module: where bench binaries are built from and
// what their results are attributed to.
type Checkout struct {
	Dir        string // module root
	Commit     string // full hash; "" outside git
	CommitTime time.Time
	Branch     string
	Dirty      bool
	GoVersion  string
	Pebble     string // pebble/v2 module version the checkout builds with
}

// Short is the abbreviated commit, or "nogit".
func (s Checkout) Short() string { return contract.ShortCommit(s.Commit) }

// command runs name with args in dir and returns its trimmed stdout. Arguments go to
// the program as they are: nothing passes through a shell.
func command(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s (in %s): %v: %s", name, strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// InspectCheckout finds the module root at or above dir and reads its git and toolchain
// facts. Outside a git checkout the git facts stay empty.
func InspectCheckout(ctx context.Context, dir string) (Checkout, error) {
	gomod, err := command(ctx, dir, "go", "env", "GOMOD")
	if err != nil {
		return Checkout{}, err
	}
	if gomod == "" || gomod == os.DevNull {
		return Checkout{}, fmt.Errorf("%s is not inside the backfill-bench module: run benchrun from the checkout or pass --src", dir)
	}
	s := Checkout{Dir: filepath.Dir(gomod)}
	if s.GoVersion, err = command(ctx, s.Dir, "go", "env", "GOVERSION"); err != nil {
		return s, err
	}
	// Best effort: a checkout too old or too broken to list modules still runs.
	s.Pebble, _ = command(ctx, s.Dir, "go", "list", "-m", "-f", "{{.Version}}", "github.com/cockroachdb/pebble/v2")
	if _, err := command(ctx, s.Dir, "git", "rev-parse", "--git-dir"); err != nil {
		return s, nil // not a git checkout: results carry no commit
	}
	if s.Commit, err = command(ctx, s.Dir, "git", "rev-parse", "HEAD"); err != nil {
		return s, nil // a repository without commits
	}
	if ct, err := command(ctx, s.Dir, "git", "show", "-s", "--format=%cI", "HEAD"); err == nil {
		s.CommitTime, _ = time.Parse(time.RFC3339, ct)
	}
	s.Branch, _ = command(ctx, s.Dir, "git", "rev-parse", "--abbrev-ref", "HEAD")
	status, err := command(ctx, s.Dir, "git", "status", "--porcelain", "--untracked-files=no")
	s.Dirty = err != nil || status != ""
	return s, nil
}

// Machine describes the computer results come from.
type Machine struct {
	CPU         string
	Cores       int
	MemoryBytes int64
	OS          string // GOOS/GOARCH
	Fingerprint string // short hash of the above: results are comparable within one
}

// InspectMachine reads the CPU model and memory size (Linux; elsewhere they stay
// unknown) and derives the fingerprint. The host name is left out on purpose: CI
// runners of one type get new names every run but are the same machine for results.
func InspectMachine() Machine {
	m := Machine{CPU: "unknown", Cores: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		m.CPU = v
	}
	if v := procField("/proc/meminfo", "MemTotal"); v != "" {
		var kb int64
		fmt.Sscanf(v, "%d", &kb)
		m.MemoryBytes = kb << 10
	}
	// Memory rounded to GiB: the kernel's own reservation moves the exact figure.
	h := sha256.Sum256([]byte(fmt.Sprintf("%s|%d|%d|%s", m.CPU, m.Cores, (m.MemoryBytes+1<<29)>>30, m.OS)))
	m.Fingerprint = fmt.Sprintf("%x", h[:6])
	return m
}

// procField returns the value of the first "key : value" line of a /proc file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return ""
}

// Describe is the machine on one line: "`fingerprint`, CPU, N cores, OS".
func (m Machine) Describe() string {
	return fmt.Sprintf("`%s`, %s, %d cores, %s", m.Fingerprint, m.CPU, m.Cores, m.OS)
}

// ChangedPaths lists the files head changed since it left base (git diff
// base...head), or, for the working tree (head ""), the files that differ from
// base. The refs go to git as arguments.
func ChangedPaths(ctx context.Context, dir, base, head string) ([]string, error) {
	args := []string{"diff", "--name-only", "--end-of-options", base}
	if head != "" {
		args[len(args)-1] = base + "..." + head
	}
	out, err := command(ctx, dir, "git", append(args, "--")...)
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}
