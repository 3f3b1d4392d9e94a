#!/usr/bin/env bash
# Push a branch, fetching and rebasing onto what others pushed meanwhile, a few
# times: a nightly or an assets push must not fail because main (or the branch)
# moved while it ran.
#
#   ci/push-retry.sh REPO_DIR REMOTE BRANCH
#
# Environment: PUSH_TRIES (default 5), PUSH_WAIT seconds times the try between
# tries (default 2); credentials as git reads them (e.g. GIT_CONFIG_* variables).
set -euo pipefail
dir="${1:?usage: ci/push-retry.sh REPO_DIR REMOTE BRANCH}" remote="${2:?}" branch="${3:?}"
tries="${PUSH_TRIES:-5}"
for ((i = 1; i <= tries; i++)); do
	if git -C "$dir" push -q "$remote" "HEAD:refs/heads/$branch"; then
		echo "pushed $branch (try $i)"
		exit 0
	fi
	echo "push of $branch refused (try $i of $tries); fetching and rebasing" >&2
	sleep "$((i * ${PUSH_WAIT:-2}))"
	if git -C "$dir" fetch -q "$remote" "$branch"; then
		git -C "$dir" rebase -q FETCH_HEAD || { git -C "$dir" rebase --abort; echo "rebase onto $branch failed" >&2; exit 1; }
	fi
done
echo "could not push $branch after $tries tries" >&2
exit 1
