#!/usr/bin/env bash
# Run the nightly on Kubernetes with ci/k8s-nightly.yaml.
#
#   ci/k8s-nightly.sh render SHA    print the Job with every shard fixed to commit SHA
#   ci/k8s-nightly.sh apply SHA     render and kubectl apply it
#   ci/k8s-nightly.sh collect       take each pod's results from its log, merge them
#                                   and record the night (ci/nightly.sh record)
#
# Environment: KUBECTL (default kubectl), and ci/nightly.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."
read -r -a kubectl <<<"${KUBECTL:-kubectl}"
job=backfill-bench-nightly

render() {
	local sha="${1:?usage: ci/k8s-nightly.sh render SHA}"
	[[ "$sha" =~ ^[0-9a-f]{40}$ ]] || { echo "$sha: want a full 40-character commit SHA, so that every shard measures the same commit" >&2; exit 2; }
	sed "s/__REVISION__/$sha/" ci/k8s-nightly.yaml
}

case "${1:-}" in
render) render "${2:-}" ;;
apply) render "${2:-}" | "${kubectl[@]}" apply -f - ;;
collect)
	dir="$(mktemp -d)"
	files=()
	for pod in $("${kubectl[@]}" get pods -l "job-name=$job" -o 'jsonpath={.items[*].metadata.name}'); do
		"${kubectl[@]}" logs "$pod" | sed -n '/^--- backfill-bench results ---$/,/^--- end of results ---$/p' | sed '1d;$d' >"$dir/$pod.txt"
		[ -s "$dir/$pod.txt" ] || { echo "pod $pod printed no results: did it succeed?" >&2; exit 2; }
		files+=("$dir/$pod.txt")
	done
	[ "${#files[@]}" -gt 0 ] || { echo "no pods of job $job" >&2; exit 2; }
	exec ci/nightly.sh record "${files[@]}"
	;;
*)
	echo "usage: ci/k8s-nightly.sh render SHA | apply SHA | collect" >&2
	exit 2
	;;
esac
