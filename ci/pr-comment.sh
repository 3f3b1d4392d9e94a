#!/usr/bin/env bash
# Post a PR benchmark report as one comment that updates itself, and the verdict as
# a check run on the measured commit: the step of the pr-comment workflow, which
# runs on workflow_run with the write token and never runs the PR's code. It reads
# the artifact the pr-benchmark run uploaded as data only: the comment is rendered
# here, by this (the base branch's) benchrun, from verdict.json, checked against its
# schema, every value escaped; only plots that are PNGs within limits are pushed to
# the assets branch, which keeps the newest run of each open PR only.
#
#   ci/pr-comment.sh DIR
#
# DIR holds verdict.json, pr-number and plots/*.png (report.md, the PR's own
# rendering, is not used). The artifact comes from a run of the PR's code, so its
# PR number is used only if that PR's head is HEAD_SHA, the commit the run measured
# (a fork PR too: the number is looked up in REPO); otherwise nothing is pushed or
# posted and the exit status is 2. A PR that changes ci/ or .github/ ran its own
# CI, so its comment and check say the verdict is unverified. Environment:
#   GH_TOKEN       a token that may write pull requests, checks and the assets branch
#   REPO           owner/name
#   RUN_ID         the pr-benchmark run, to keep each run's plots apart
#   HEAD_SHA       that run's head commit (github.event.workflow_run.head_sha)
#   BENCHRUN       how to invoke benchrun (default: go run ./cmd/benchrun, here)
#   BOT_LOGIN      the author of the comments to update, default github-actions[bot]
#   ASSETS_BRANCH  default benchmark-assets
#   SERVER_URL     default https://github.com
#   RAW_URL        where the branch's files are served, default https://raw.githubusercontent.com
set -euo pipefail
dir="${1:?usage: ci/pr-comment.sh DIR}"
: "${GH_TOKEN:?}" "${REPO:?}" "${RUN_ID:?}"
branch="${ASSETS_BRANCH:-benchmark-assets}"
server="${SERVER_URL:-https://github.com}"
bot="${BOT_LOGIN:-github-actions[bot]}"
here="$(cd "$(dirname "$0")" && pwd)"
read -r -a benchrun <<<"${BENCHRUN:-go run ./cmd/benchrun}"
dir="$(cd "$dir" && pwd)"

pr="$(tr -d '[:space:]' <"$dir/pr-number")"
[[ "$pr" =~ ^[0-9]+$ ]] || { echo "pr-number: not a number" >&2; exit 2; }
[[ "$RUN_ID" =~ ^[0-9]+$ ]] || { echo "RUN_ID: not a number" >&2; exit 2; }
[[ "$REPO" =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] || { echo "REPO \"$REPO\": want owner/name" >&2; exit 2; }
[[ "$bot" =~ ^[A-Za-z0-9-]+(\[bot\])?$ ]] || { echo "BOT_LOGIN \"$bot\": want a GitHub login" >&2; exit 2; }
[[ "${HEAD_SHA:-}" =~ ^[0-9a-f]{40}$ ]] || { echo "HEAD_SHA \"${HEAD_SHA:-}\": want the full 40-character head commit of the pr-benchmark run (github.event.workflow_run.head_sha)" >&2; exit 2; }
pr_head="$(gh pr view "$pr" --repo "$REPO" --json headRefOid | jq -r .headRefOid)" ||
	{ echo "pr-number $pr: cannot read that PR's head from $REPO" >&2; exit 2; }
if [ "$pr_head" != "$HEAD_SHA" ]; then
	echo "pr-number $pr: that PR's head is $pr_head, not $HEAD_SHA, the commit the run measured;" \
		"refusing to comment (a forged number, or a PR pushed to since: its newer run will comment)" >&2
	exit 2
fi
marker="<!-- backfill-bench-report -->"
tmp="$(mktemp -d)"
prefix="pr-$pr/$RUN_ID"
raw="${RAW_URL:-https://raw.githubusercontent.com}/$REPO/$branch/$prefix"
run_url=""
if [[ "$server" == https://* ]]; then run_url="$server/$REPO/actions/runs/$RUN_ID"; fi

# The PR's changed files, from GitHub, not the artifact: ci/ or .github/ among them
# marks the verdict unverified.
gh api "repos/$REPO/pulls/$pr/files" --paginate --jq '.[].filename' >"$tmp/changed" ||
	{ echo "pr-number $pr: cannot list the PR's changed files" >&2; exit 2; }

# The comment and the check run, rendered from verdict.json by this benchrun; the
# plots that pass its checks go to $tmp/plots.
if [ -f "$dir/verdict.json" ]; then
	(cd "$here/.." && "${benchrun[@]}" comment --verdict "$dir/verdict.json" --out "$tmp/comment.md" --check "$tmp/check.json" \
		--plots "$dir/plots" --plots-out "$tmp/plots" --plots-url "$raw" --changed "$tmp/changed" ${run_url:+--run-url "$run_url"}) ||
		{ echo "the run's verdict.json or plots were refused; nothing posted" >&2; exit 2; }
else
	printf '## backfill-bench\n\nThe benchmark run ended without a verdict (a build or run error)%s.\n' "${run_url:+: $run_url}" >"$tmp/comment.md"
	jq -n '{status: "completed", conclusion: "failure", output: {title: "no verdict: the benchmark run failed", summary: "The run wrote no verdict.json."}}' >"$tmp/check.json"
fi

# The assets branch: this run's plots under pr-N/RUN, the PR's older runs and the
# plots of closed PRs removed.
work="$tmp/assets"
remote="$server/$REPO.git"
git init -q "$work"
git -C "$work" config user.name "backfill-bench"
git -C "$work" config user.email "backfill-bench@users.noreply.github.com"
# shellcheck source=ci/git-auth.sh
. "$here/git-auth.sh"
shopt -s nullglob
plots=("$tmp"/plots/*.png)
have=false
if git -C "$work" fetch -q --depth 1 "$remote" "$branch" 2>/dev/null; then
	git -C "$work" checkout -q -B "$branch" FETCH_HEAD
	have=true
elif [ "${#plots[@]}" -gt 0 ]; then
	git -C "$work" checkout -q --orphan "$branch"
fi
if [ "$have" = true ] || [ "${#plots[@]}" -gt 0 ]; then
	for old in "$work"/pr-*/; do
		n="$(basename "$old")"
		n="${n#pr-}"
		[[ "$n" =~ ^[0-9]+$ ]] || continue
		if [ "$n" = "$pr" ]; then
			git -C "$work" rm -rq --ignore-unmatch "pr-$n"
		elif [ "$(gh pr view "$n" --repo "$REPO" --json state --jq .state 2>/dev/null || echo UNKNOWN)" != OPEN ]; then
			git -C "$work" rm -rq --ignore-unmatch "pr-$n" # closed, merged, or gone
		fi
	done
	if [ "${#plots[@]}" -gt 0 ]; then
		mkdir -p "$work/$prefix"
		cp "${plots[@]}" "$work/$prefix/"
		git -C "$work" add "$prefix"
	fi
	if ! git -C "$work" diff --cached --quiet; then
		git -C "$work" commit -q -m "plots of PR #$pr, run $RUN_ID; older runs and closed PRs pruned"
		"$here/push-retry.sh" "$work" "$remote" "$branch"
	fi
fi

# The comment: the bot's own, found by its author and marker, else a new one.
{
	echo "$marker"
	cat "$tmp/comment.md"
} >"$tmp/body"
id="$(gh api "repos/$REPO/issues/$pr/comments" --paginate \
	--jq ".[] | select(.user.login == \"$bot\" and (.body | startswith(\"$marker\"))) | .id" | head -n 1)"
if [ -n "$id" ]; then
	gh api -X PATCH "repos/$REPO/issues/comments/$id" -F "body=@$tmp/body" >/dev/null
	echo "updated comment $id on #$pr"
else
	gh api -X POST "repos/$REPO/issues/$pr/comments" -F "body=@$tmp/body" >/dev/null
	echo "commented on #$pr"
fi

# The check run on the measured commit: failure, neutral (inconclusive, nothing
# judged, unverified) or success, from the verdict, titled with its headline.
jq --arg sha "$HEAD_SHA" '. + {name: "backfill-bench verdict", head_sha: $sha}' "$tmp/check.json" >"$tmp/check-run.json"
gh api -X POST "repos/$REPO/check-runs" --input "$tmp/check-run.json" >/dev/null
echo "check run: $(jq -r '.conclusion + ": " + .output.title' "$tmp/check.json")"
