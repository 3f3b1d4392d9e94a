#!/usr/bin/env bash
# Compare a pull request's head with the merge base of its target branch: the step
# the PR workflow runs, runnable locally too.
#
#   ci/pr-compare.sh [BASE_BRANCH] [OUT]
#
# BASE_BRANCH defaults to main (origin/main when that exists); OUT to compare/pr.
# Environment:
#   BENCHRUN      how to invoke benchrun (default: go run ./cmd/benchrun); the PR
#                 workflow builds it from the base commit, so a PR cannot change
#                 the verdict's own code or thresholds
#   SRC           the checkout to compare (default: this repository); the PR
#                 workflow checks the PR out apart from the trusted base
#   COMPARE_ARGS  extra flags for benchrun compare, e.g. "--profile gp3 --count 10"
#   MEASURE       instructions (default: each job's window counted under callgrind,
#                 which a busy shared runner cannot move; needs valgrind) or time
#
# Exit status: benchrun compare's: 0 no regression, 1 regression, 2 error,
# 3 inconclusive.
set -euo pipefail
cd "$(dirname "$0")/.."

read -r -a benchrun <<<"${BENCHRUN:-go run ./cmd/benchrun}"
read -r -a extra <<<"${COMPARE_ARGS:-}"
branch="${1:-main}"
out="${2:-compare/pr}"
src="${SRC:-$PWD}"

target="$branch"
if git -C "$src" rev-parse --verify --quiet "origin/$branch^{commit}" >/dev/null; then
	target="origin/$branch"
fi
base="$(git -C "$src" merge-base "$target" HEAD)" || { echo "no merge base of $target and HEAD" >&2; exit 2; }
echo "comparing HEAD $(git -C "$src" rev-parse --short HEAD) with merge base $(git -C "$src" rev-parse --short "$base") of $target" >&2
status=0
"${benchrun[@]}" compare --src "$src" --out "$out" --measure "${MEASURE:-instructions}" "${extra[@]}" "$base" HEAD || status=$?
echo "report: $out/report.md" >&2
exit "$status"
