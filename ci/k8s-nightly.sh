#!/usr/bin/env bash
# Run the nightly on Kubernetes with ci/k8s-nightly.yaml.
#
#   ci/k8s-nightly.sh render SHA    print the Job with every shard fixed to commit SHA
#   ci/k8s-nightly.sh apply SHA     delete the previous night's Job (a Job's pod
#                                   template cannot change) and its pods, waiting,
#                                   then render and kubectl apply it
#   ci/k8s-nightly.sh collect       take each shard's results from the log of its
#                                   succeeded pod (a retried shard also has failed
#                                   ones), merge them and record the night
#                                   (ci/nightly.sh record); a shard without a
#                                   succeeded pod is an error
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
apply)
	job_yaml="$(render "${2:-}")"
	# Foreground: the Job goes only after its pods, so collect never reads an old night's.
	"${kubectl[@]}" delete job "$job" --ignore-not-found --cascade=foreground --wait --timeout=10m
	"${kubectl[@]}" apply -f - <<<"$job_yaml"
	;;
collect)
	completions="$("${kubectl[@]}" get job "$job" -o 'jsonpath={.spec.completions}')" ||
		{ echo "job $job: not found; run ci/k8s-nightly.sh apply SHA first" >&2; exit 2; }
	[[ "$completions" =~ ^[0-9]+$ ]] || { echo "job $job: completions \"$completions\" is not a number" >&2; exit 2; }
	succeeded="$("${kubectl[@]}" get pods -l "job-name=$job" --field-selector status.phase=Succeeded \
		-o 'jsonpath={range .items[*]}{.metadata.name}{" "}{.metadata.annotations.batch\.kubernetes\.io/job-completion-index}{"\n"}{end}')"
	declare -A podOf # completion index (the shard - 1) -> its succeeded pod
	while read -r pod index; do
		if [[ "$index" =~ ^[0-9]+$ ]] && [ -z "${podOf[$index]:-}" ]; then podOf[$index]="$pod"; fi
	done <<<"$succeeded"
	missing=()
	for ((i = 0; i < completions; i++)); do
		[ -n "${podOf[$i]:-}" ] || missing+=("$((i + 1))")
	done
	if [ "${#missing[@]}" -gt 0 ]; then
		echo "job $job: shard(s) ${missing[*]} of $completions have no succeeded pod; see kubectl get pods -l job-name=$job, and wait for them or apply again" >&2
		exit 2
	fi
	dir="$(mktemp -d)"
	files=()
	for ((i = 0; i < completions; i++)); do
		pod="${podOf[$i]}"
		"${kubectl[@]}" logs "$pod" | sed -n '/^--- backfill-bench results ---$/,/^--- end of results ---$/p' | sed '1d;$d' >"$dir/$pod.txt"
		[ -s "$dir/$pod.txt" ] || { echo "pod $pod (shard $((i + 1))) succeeded but printed no results" >&2; exit 2; }
		files+=("$dir/$pod.txt")
	done
	exec ci/nightly.sh record "${files[@]}"
	;;
*)
	echo "usage: ci/k8s-nightly.sh render SHA | apply SHA | collect" >&2
	exit 2
	;;
esac
