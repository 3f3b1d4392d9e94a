#!/usr/bin/env bash
# Nightly benchmarks: the steps the nightly workflow runs, runnable locally too.
#
#   ci/nightly.sh                    run the whole nightly matrix here and record it
#   ci/nightly.sh shard I/N [OUT]    run shard I of N of the matrix into OUT (default out/shard-I)
#   ci/nightly.sh record FILE...     merge shard results and record them in the history
#   ci/nightly.sh mutants            apply each executor mutant (bench/mutation) to a copy
#                                    of the tree and require the suite to catch it
#   ci/nightly.sh publish-history REMOTE
#                                    commit the history (without its images) and push it
#                                    to main, fetching and rebasing if main moved
#   ci/nightly.sh publish-pages REMOTE [COMMIT_URL]
#                                    write the dashboard and the trend images and push
#                                    them to the benchmark-pages branch, not main
#
# Environment:
#   BENCHRUN      how to invoke benchrun (default: go run ./cmd/benchrun)
#   GH_TOKEN      the token git pushes with (publish-*), passed in the environment
#   MAIN_BRANCH, PAGES_BRANCH  default main and benchmark-pages
#   NIGHTLY_ARGS  extra flags for the matrix, e.g. "--profile mem --rows 20000 --count 3"
#   HISTORY       the history directory (default: results/history)
#
# Exit status: 0 no alert on the newest night, 1 the newest night starts a
# regression, 2 a usage, build or run error.
set -euo pipefail
cd "$(dirname "$0")/.."

read -r -a benchrun <<<"${BENCHRUN:-go run ./cmd/benchrun}"
read -r -a extra <<<"${NIGHTLY_ARGS:-}"
history="${HISTORY:-results/history}"

case "${1:-all}" in
all)
	exec "${benchrun[@]}" nightly --history "$history" "${extra[@]}"
	;;
shard)
	shard="${2:?usage: ci/nightly.sh shard I/N [OUT]}"
	out="${3:-out/shard-${shard%/*}}"
	exec "${benchrun[@]}" run --matrix nightly --shard "$shard" --out "$out" --no-plots "${extra[@]}"
	;;
record)
	shift
	[ "$#" -gt 0 ] || { echo "usage: ci/nightly.sh record FILE..." >&2; exit 2; }
	merged="$(mktemp -d)/merged.txt"
	"${benchrun[@]}" merge -o "$merged" "$@"
	exec "${benchrun[@]}" nightly --history "$history" --results "$merged"
	;;
mutants)
	exec go test -count=1 -timeout 60m -v -run TestMutants ./bench/mutation -mutants
	;;
publish-history)
	remote="${2:?usage: ci/nightly.sh publish-history REMOTE}"
	# shellcheck source=ci/git-auth.sh
	. ci/git-auth.sh
	git config user.name "backfill-bench nightly"
	git config user.email "nightly@users.noreply.github.com"
	git add -- "$history" ":(exclude)$history/**/*.png" ":(exclude)$history/*/*.png"
	if git commit -q -m "nightly: $(date -u +%F)"; then
		exec ci/push-retry.sh . "$remote" "${MAIN_BRANCH:-main}"
	fi
	echo "nothing new in $history"
	;;
publish-pages)
	remote="${2:?usage: ci/nightly.sh publish-pages REMOTE [COMMIT_URL]}"
	branch="${PAGES_BRANCH:-benchmark-pages}"
	# shellcheck source=ci/git-auth.sh
	. ci/git-auth.sh
	pages="$(mktemp -d)"
	git -C "$pages" init -q
	git -C "$pages" config user.name "backfill-bench nightly"
	git -C "$pages" config user.email "nightly@users.noreply.github.com"
	if git -C "$pages" fetch -q --depth 1 "$remote" "$branch" 2>/dev/null; then
		git -C "$pages" checkout -q -B "$branch" FETCH_HEAD
	else
		git -C "$pages" checkout -q --orphan "$branch"
	fi
	rm -rf "${pages:?}/history"
	cp -R "$history" "$pages/history"
	site=(site --history "$pages/history" --out "$pages")
	if [ -n "${3:-}" ]; then
		site+=(--commit-url "$3")
	fi
	"${benchrun[@]}" "${site[@]}" >/dev/null
	git -C "$pages" add -A
	if git -C "$pages" commit -q -m "nightly pages: $(date -u +%F)"; then
		exec ci/push-retry.sh "$pages" "$remote" "$branch"
	fi
	echo "pages unchanged"
	;;
*)
	echo "usage: ci/nightly.sh [all | shard I/N [OUT] | record FILE... | publish-history REMOTE | publish-pages REMOTE [COMMIT_URL]]" >&2
	exit 2
	;;
esac
