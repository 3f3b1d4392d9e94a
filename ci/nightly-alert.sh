#!/usr/bin/env bash
# Keep one issue per change point of the nightly history: the nightly workflow's
# alert step, which runs even when the history could not be pushed.
#
# An issue's title names the cell, metric and commit of a change point. If an
# issue with that title exists, open or closed, no other is opened (a closed one
# stays closed: a maintainer decided). It is commented on only when the alert's
# night, the first night after the change, is not yet named in its body or
# comments: a change point still in the window night after night is said once,
# and again only if it moves to another night of that commit.
#
#   ci/nightly-alert.sh ALERTS_JSON [REPORT_MD]
#
# Environment: GH_TOKEN (may write issues), REPO (owner/name), LABEL (default
# nightly-regression).
set -euo pipefail
alerts="${1:?usage: ci/nightly-alert.sh ALERTS_JSON [REPORT_MD]}"
report="${2:-}"
: "${GH_TOKEN:?}" "${REPO:?}"
label="${LABEL:-nightly-regression}"

# One line per regression change point: the issue title, its night, the change.
jq -r '.[] | select(.kind == "change point" and .status == "regression")
	| "Nightly regression: \(.unit) of \(.cell) from \(.commit[0:12])\t\(.night)\t\(.unit) \(.delta * 100 | floor)% from night \(.night) (commit \(.commit))"' "$alerts" |
	while IFS=$'\t' read -r title night change; do
		body="$(mktemp)"
		{
			echo "$change"
			if [ -n "$report" ]; then
				echo
				cat "$report"
			fi
		} >"$body"
		# All states; newest first, so a limit only drops change points long out of the window.
		number="$(gh issue list --repo "$REPO" --state all --label "$label" --limit 1000 --json number,title |
			jq -r --arg title "$title" '[.[] | select(.title == $title)][0].number // empty')"
		if [ -z "$number" ]; then
			gh issue create --repo "$REPO" --label "$label" --title "$title" --body-file "$body" >/dev/null
			echo "opened: $title"
			continue
		fi
		said="$(gh issue view "$number" --repo "$REPO" --json body,comments |
			jq --arg said "from night $night (commit " '[.body, .comments[].body] | any(contains($said))')"
		if [ "$said" = true ]; then
			echo "#$number already names night $night: $title"
		else
			gh issue comment "$number" --repo "$REPO" --body-file "$body" >/dev/null
			echo "commented on #$number (night $night): $title"
		fi
	done
