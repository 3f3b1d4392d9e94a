package testbed

import (
	"context"
	"fmt"
	"strings"
)

// Commit is a commit of a search: its full hash and subject line.
type Commit struct {
	Hash, Subject string
}

// ResolveCommit is ref's full commit hash in repo; ref goes to git as an argument.
func ResolveCommit(ctx context.Context, repo, ref string) (string, error) {
	commit, err := command(ctx, repo, "git", "rev-parse", "--verify", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("%q is not a commit of %s: %w", ref, repo, err)
	}
	return commit, nil
}

// CommitsBetween lists the commits after good up to bad, oldest first: those on a
// path from good to bad (git rev-list --ancestry-path good..bad). good must be an
// ancestor of bad; both are full hashes.
func CommitsBetween(ctx context.Context, repo, good, bad string) ([]Commit, error) {
	if _, err := command(ctx, repo, "git", "merge-base", "--is-ancestor", good, bad); err != nil {
		return nil, fmt.Errorf("%s is not an ancestor of %s: name the good commit first, then the bad one", ShortHash(good), ShortHash(bad))
	}
	out, err := command(ctx, repo, "git", "rev-list", "--reverse", "--ancestry-path", "--format=%H %s", "--no-commit-header", good+".."+bad)
	if err != nil {
		return nil, err
	}
	var commits []Commit
	for _, line := range strings.Split(out, "\n") {
		if hash, subject, ok := strings.Cut(line, " "); ok || len(line) == 40 {
			commits = append(commits, Commit{Hash: hash, Subject: subject})
		}
	}
	return commits, nil
}

// ShortHash is a commit hash's first 12 characters.
func ShortHash(h string) string { return h[:min(len(h), 12)] }
