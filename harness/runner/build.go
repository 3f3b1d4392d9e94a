package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

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
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", out, "./bench/")
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOTMPDIR="+tmp), env...)
	gracefully(cmd, 10*time.Second)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the bench binary in %s: %v\n%s", dir, err, msg)
	}
	return nil
}

// BuildError is a side that does not build: exit status 2, not a regression.
type BuildError struct {
	Side string
	Err  error
}

func (e *BuildError) Error() string { return fmt.Sprintf("%s: %v", e.Side, e.Err) }
func (e *BuildError) Unwrap() error { return e.Err }

// AddWorktree checks ref out in a temporary git worktree of the repository at repo.
// The ref goes to git as an argument after --end-of-options, never through a shell.
func AddWorktree(ctx context.Context, repo, ref string) (dir string, remove func(), err error) {
	commit, err := command(ctx, repo, "git", "rev-parse", "--verify", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return "", nil, fmt.Errorf("%q is neither a results file nor a commit of %s: %w", ref, repo, err)
	}
	parent, err := os.MkdirTemp("", "backfill-bench-worktree-")
	if err != nil {
		return "", nil, err
	}
	dir = filepath.Join(parent, "src")
	if _, err := command(ctx, repo, "git", "worktree", "add", "--detach", dir, commit); err != nil {
		os.RemoveAll(parent)
		return "", nil, err
	}
	return dir, func() {
		command(context.Background(), repo, "git", "worktree", "remove", "--force", dir)
		os.RemoveAll(parent)
	}, nil
}
