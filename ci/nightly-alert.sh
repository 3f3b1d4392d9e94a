#!/usr/bin/env bash
# Keep one issue per change point of the nightly history: the nightly workflow's
# alert step, which runs even when the history could not be pushed.
#
# An issue's title names the cell, metric and commit of a change point. If an
# issue with that title exists, open or closed, no other is opened (a closed one
# stays closed: a maintainer decided). It is commented on only when the alert's
# night, the first night after the change, is not yet named in its body or
# comments: a change point still in the window night after night is said once,
# and again only if it moves to another night of that commit. The body gives the
# command that bisects the commits between the night before and that night to
# the one that made the change (benchrun bisect).
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

# One line per regression change point: the issue title, its night, the change,
# the commits before and at it, the cell.
jq -r '.[] | select(.kind == "change point" and .status == "regression")
	| "Nightly regression: \(.unit) of \(.cell) from \(.commit[0:12])\t\(.night)\t\(.unit) \(.delta * 100 | floor)% from night \(.night) (commit \(.commit))\t\(.previous_commit // "")\t\(.commit)\t\(.cell)"' "$alerts" |
	while IFS=$'\t' read -r title night change previous commit cell; do
		body="$(mktemp)"
		{
			echo "$change"
			# Only names that are what the history writes reach the command.
			if [[ "$previous" =~ ^[0-9a-f]{7,40}$ && "$commit" =~ ^[0-9a-f]{7,40}$ && "$cell" =~ ^[A-Za-z0-9=/._,:+%-]+$ ]]; then
				echo
				echo "To name the commit that made it, bisect the commits after the night before ($previous) up to it, from a checkout of main:"
				echo
				echo '```sh'
				echo "go build -o /tmp/benchrun ./cmd/benchrun && /tmp/benchrun bisect $previous $commit --cell '$cell'"
				echo '```'
			fi
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
