package testbed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

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
