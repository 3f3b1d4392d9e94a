#!/usr/bin/env bash
# Nightly benchmarks: the steps the nightly workflow runs, runnable locally too.
#
#   ci/nightly.sh                    run the whole nightly matrix here and record it
#   ci/nightly.sh shard I/N [OUT]    run shard I of N of the matrix into OUT (default out/shard-I)
#   ci/nightly.sh record FILE...     merge shard results and record them in the history
#
# Environment:
#   BENCHRUN      how to invoke benchrun (default: go run ./cmd/benchrun)
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
*)
	echo "usage: ci/nightly.sh [all | shard I/N [OUT] | record FILE...]" >&2
	exit 2
	;;
esac
