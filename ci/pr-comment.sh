#!/usr/bin/env bash
# Post a PR benchmark report as one comment that updates itself: the step of the
# pr-comment workflow, which runs on workflow_run with the write token and never
# runs the PR's code. It reads the artifact the pr-benchmark run uploaded (data
# only), pushes its plots to the assets branch so the comment can show them by
# absolute URL, and creates or edits the PR's one report comment.
#
#   ci/pr-comment.sh DIR
#
# DIR holds report.md, pr-number and plots/*.png. The artifact comes from a run
# of the PR's code, so its PR number is used only if that PR's head is HEAD_SHA,
# the commit the run measured (a fork PR too: the number is looked up in REPO);
# otherwise nothing is pushed or posted and the exit status is 2. Environment:
#   GH_TOKEN       a token that may write pull requests and the assets branch
#   REPO           owner/name
#   RUN_ID         the pr-benchmark run, to keep each run's plots apart
#   HEAD_SHA       that run's head commit (github.event.workflow_run.head_sha)
#   ASSETS_BRANCH  default benchmark-assets
#   SERVER_URL     default https://github.com
#   RAW_URL        where the branch's files are served, default https://raw.githubusercontent.com
set -euo pipefail
dir="${1:?usage: ci/pr-comment.sh DIR}"
: "${GH_TOKEN:?}" "${REPO:?}" "${RUN_ID:?}"
branch="${ASSETS_BRANCH:-benchmark-assets}"
server="${SERVER_URL:-https://github.com}"
here="$(cd "$(dirname "$0")" && pwd)"

pr="$(tr -d '[:space:]' <"$dir/pr-number")"
[[ "$pr" =~ ^[0-9]+$ ]] || { echo "pr-number: not a number" >&2; exit 2; }
[[ "$RUN_ID" =~ ^[0-9]+$ ]] || { echo "RUN_ID: not a number" >&2; exit 2; }
[[ "${HEAD_SHA:-}" =~ ^[0-9a-f]{40}$ ]] || { echo "HEAD_SHA \"${HEAD_SHA:-}\": want the full 40-character head commit of the pr-benchmark run (github.event.workflow_run.head_sha)" >&2; exit 2; }
pr_head="$(gh pr view "$pr" --repo "$REPO" --json headRefOid | jq -r .headRefOid)" ||
	{ echo "pr-number $pr: cannot read that PR's head from $REPO" >&2; exit 2; }
if [ "$pr_head" != "$HEAD_SHA" ]; then
	echo "pr-number $pr: that PR's head is $pr_head, not $HEAD_SHA, the commit the run measured;" \
		"refusing to comment (a forged number, or a PR pushed to since: its newer run will comment)" >&2
	exit 2
fi
marker="<!-- backfill-bench-report -->"
body="$(mktemp)"

# The plots, under pr-N/RUN on the assets branch.
prefix="pr-$pr/$RUN_ID"
shopt -s nullglob
plots=("$dir"/plots/*.png)
if [ "${#plots[@]}" -gt 0 ]; then
	work="$(mktemp -d)"
	remote="$server/$REPO.git"
	git -C "$work" init -q
	git -C "$work" config user.name "backfill-bench"
	git -C "$work" config user.email "backfill-bench@users.noreply.github.com"
	# shellcheck source=ci/git-auth.sh
	. "$here/git-auth.sh"
	if git -C "$work" fetch -q --depth 1 "$remote" "$branch" 2>/dev/null; then
		git -C "$work" checkout -q -B "$branch" FETCH_HEAD
	else
		git -C "$work" checkout -q --orphan "$branch"
	fi
	mkdir -p "$work/$prefix"
	for p in "${plots[@]}"; do
		name="$(basename "$p")"
		[[ "$name" =~ ^[A-Za-z0-9._-]+\.png$ ]] || continue
		cp "$p" "$work/$prefix/$name"
	done
	git -C "$work" add "$prefix"
	git -C "$work" commit -q -m "plots of PR #$pr, run $RUN_ID"
	"$here/push-retry.sh" "$work" "$remote" "$branch"
fi

# The report, its plots linked by absolute URL.
raw="${RAW_URL:-https://raw.githubusercontent.com}/$REPO/$branch/$prefix"
{
	echo "$marker"
	sed -E "s#\]\(plots/([A-Za-z0-9._-]+\.png)\)#](${raw//#/\\#}/\1)#g" "$dir/report.md"
} >"$body"

id="$(gh api "repos/$REPO/issues/$pr/comments" --paginate --jq ".[] | select(.body | startswith(\"$marker\")) | .id" | head -n 1)"
if [ -n "$id" ]; then
	gh api -X PATCH "repos/$REPO/issues/comments/$id" -F "body=@$body" >/dev/null
	echo "updated comment $id on #$pr"
else
	gh api -X POST "repos/$REPO/issues/$pr/comments" -F "body=@$body" >/dev/null
	echo "commented on #$pr"
fi
