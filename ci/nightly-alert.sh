#!/usr/bin/env bash
# Keep one open issue per change point of the nightly history: the nightly
# workflow's alert step, which runs even when the history could not be pushed.
# An issue whose title names the cell, metric and commit of a change point is
# commented on when the change is seen again, not opened twice.
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

# One line per regression change point: the issue title, tab, the change.
jq -r '.[] | select(.kind == "change point" and .status == "regression")
	| "Nightly regression: \(.unit) of \(.cell) from \(.commit[0:12])\t\(.unit) \(.delta * 100 | floor)% from night \(.night) (commit \(.commit))"' "$alerts" |
	while IFS=$'\t' read -r title change; do
		body="$(mktemp)"
		{
			echo "$change"
			if [ -n "$report" ]; then
				echo
				cat "$report"
			fi
		} >"$body"
		number="$(gh issue list --repo "$REPO" --state open --label "$label" --limit 200 --json number,title \
			--jq ".[] | select(.title == \"$title\") | .number" | head -n 1)"
		if [ -n "$number" ]; then
			gh issue comment "$number" --repo "$REPO" --body-file "$body" >/dev/null
			echo "commented on #$number: $title"
		else
			gh issue create --repo "$REPO" --label "$label" --title "$title" --body-file "$body" >/dev/null
			echo "opened: $title"
		fi
	done
