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
#   EXPECTED_REGRESSION  the reason a regression is expected (the PR's
#                 expected-regression label): a confirmed regression then passes,
#                 the reason recorded in verdict.json and the comment
#
# Exit status: benchrun compare's: 0 no regression, 1 regression, 2 error,
# 3 inconclusive. Inconclusive is not a pass: the script says so with the
# verdict's headline, under GitHub Actions as a warning annotation (the verdict's
# check run, posted by pr-comment.sh, is neutral).
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
if [ -n "${EXPECTED_REGRESSION:-}" ]; then
	extra+=(--expected-regression "$EXPECTED_REGRESSION")
fi
status=0
"${benchrun[@]}" compare --src "$src" --out "$out" --measure "${MEASURE:-instructions}" "${extra[@]}" "$base" HEAD || status=$?
echo "report: $out/report.md" >&2
if [ "$status" = 3 ]; then
	# The headline is report.md's third line, in bold.
	headline="$(sed -n '3{s/^\*\*//;s/\*\*$//;p}' "$out/report.md" 2>/dev/null || true)"
	echo "inconclusive (exit 3), not a pass: ${headline:-see $out/report.md}" >&2
	if [ "${GITHUB_ACTIONS:-}" = true ]; then
		# A workflow command's message escapes %, CR and LF.
		msg="${headline//'%'/%25}"
		msg="${msg//$'\r'/%0D}"
		echo "::warning title=benchmark inconclusive (not a pass)::${msg//$'\n'/%0A}"
	fi
fi
exit "$status"
