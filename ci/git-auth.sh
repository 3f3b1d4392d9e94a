# Sourced by the CI scripts: when GH_TOKEN is set, git authenticates with it through
# the environment (an http.extraheader in GIT_CONFIG_*), never in a .git/config
# that later steps, or the code they build, could read.
if [ -n "${GH_TOKEN:-}" ]; then
	export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=http.extraheader
	GIT_CONFIG_VALUE_0="AUTHORIZATION: basic $(printf 'x-access-token:%s' "$GH_TOKEN" | base64 -w0)"
	export GIT_CONFIG_VALUE_0
fi
