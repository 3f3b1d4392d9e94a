// Package ci holds the scripts the GitHub workflows (.github/workflows) call; its
// tests lint the workflows and run the scripts on a tiny matrix, with a fake gh,
// a fake kubectl and local git remotes.
package ci

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestWorkflowsPassActionlint(t *testing.T) {
	workflows, _ := filepath.Glob("../.github/workflows/*.yml")
	if len(workflows) != 3 {
		t.Fatalf("workflows %v, want nightly, pr-benchmark and pr-comment", workflows)
	}
	out, err := exec.Command("go", append([]string{"tool", "actionlint", "-no-color", "-config-file", "../.github/actionlint.yaml"}, workflows...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("actionlint: %v\n%s", err, out)
	}
	// Every action is pinned by a full commit SHA, with its version in a comment.
	pinned := regexp.MustCompile(`uses: [\w.-]+/[\w.-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$`)
	for _, w := range workflows {
		data, _ := os.ReadFile(w)
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "uses:") && !pinned.MatchString(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "- "))) {
				t.Errorf("%s: %q is not pinned by SHA with its version", filepath.Base(w), strings.TrimSpace(line))
			}
		}
	}
	// Fork safety: the run that builds the PR has a read-only token and keeps no
	// credentials; the run with the write token never checks the PR out.
	pr := readFile(t, "../.github/workflows/pr-benchmark.yml")
	if !strings.Contains(pr, "permissions:\n  contents: read\n") || strings.Contains(pr, "write") || strings.Count(pr, "persist-credentials: false") != 2 {
		t.Error("pr-benchmark.yml: want contents: read only and no credentials kept by either checkout")
	}
	comment := readFile(t, "../.github/workflows/pr-comment.yml")
	// The head SHA only reaches pr-comment.sh, which checks the artifact's PR number with it.
	const headEnv = "HEAD_SHA: ${{ github.event.workflow_run.head_sha }}\n"
	if strings.Count(comment, headEnv) != 1 {
		t.Error("pr-comment.yml: want the run's head SHA passed to pr-comment.sh as HEAD_SHA")
	}
	// The comment and the verdict's check run are rendered by the checked-out default
	// branch's benchrun, which may write checks.
	if !strings.Contains(comment, "checks: write") || !strings.Contains(comment, "go build -o \"$RUNNER_TEMP/benchrun\" ./cmd/benchrun") || !strings.Contains(comment, `BENCHRUN="$RUNNER_TEMP/benchrun" ci/pr-comment.sh`) {
		t.Error("pr-comment.yml: want benchrun built from its own checkout, passed to pr-comment.sh, and checks: write for the verdict's check run")
	}
	comment = strings.Replace(comment, headEnv, "", 1)
	if !strings.Contains(comment, "workflow_run:") || strings.Contains(comment, "head.sha") || strings.Contains(comment, "head_sha") || strings.Contains(comment, "ref:") {
		t.Error("pr-comment.yml: want a workflow_run job that never checks out the PR")
	}
	// And it does catch a broken workflow.
	broken := filepath.Join(t.TempDir(), "broken.yml")
	os.WriteFile(broken, []byte("on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.nope }}\n"), 0o644)
	if out, err := exec.Command("go", "tool", "actionlint", "-no-color", broken).CombinedOutput(); err == nil {
		t.Errorf("actionlint passed a broken workflow:\n%s", out)
	}
}

// benchrun builds the CLI once for the scripts.
func benchrun(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "benchrun")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/benchrun")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build benchrun: %v\n%s", err, out)
	}
	return bin
}

func script(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if x, ok := err.(*exec.ExitError); ok {
			return string(out), x.ExitCode()
		}
		t.Fatal(err)
	}
	return string(out), 0
}

// TestNightlyScript runs the workflow's steps with a tiny matrix: two shards, then
// the record step, twice, and checks the history has two nights with their files.
func TestNightlyScript(t *testing.T) {
	if testing.Short() {
		t.Skip("runs benchmarks")
	}
	tmp := t.TempDir()
	env := []string{
		"BENCHRUN=" + benchrun(t),
		"NIGHTLY_ARGS=--profile mem --workload narrow --scan merged --rows 2000 --barrier 500rows,1000rows --count 2",
		"HISTORY=" + filepath.Join(tmp, "history"),
	}
	for night := 1; night <= 2; night++ {
		var files []string
		for _, shard := range []string{"1", "2"} {
			out := filepath.Join(tmp, "night", string(rune('0'+night)), shard)
			if log, code := script(t, env, "nightly.sh", "shard", shard+"/2", out); code != 0 {
				t.Fatalf("nightly.sh shard %s/2: exit %d\n%s", shard, code, log)
			}
			files = append(files, filepath.Join(out, "results.txt"))
		}
		log, code := script(t, env, append([]string{"nightly.sh", "record"}, files...)...)
		if code > 1 {
			t.Fatalf("nightly.sh record: exit %d\n%s", code, log)
		}
	}
	machines, _ := filepath.Glob(filepath.Join(tmp, "history", "*"))
	if len(machines) != 1 {
		t.Fatalf("history machines %v, want one", machines)
	}
	nights, _ := filepath.Glob(filepath.Join(machines[0], "*", "results.txt"))
	if len(nights) != 2 {
		t.Errorf("nights %v, want two", nights)
	}
	for _, f := range []string{"nightly.md", "alerts.json", "trends-mem.png"} {
		if _, err := os.Stat(filepath.Join(machines[0], f)); err != nil {
			t.Error(err)
		}
	}
	// Both shards' cells are in each night: 2 barriers × persist off and on, 2 rounds.
	data, _ := os.ReadFile(nights[0])
	if n := strings.Count(string(data), "\nBenchmarkBackfill/"); n != 8 {
		t.Errorf("a night has %d results, want 8", n)
	}
}

// TestPRCompareScript compares HEAD with its own merge base on a tiny matrix.
func TestPRCompareScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two commits")
	}
	out := filepath.Join(t.TempDir(), "cmp")
	env := []string{
		"BENCHRUN=" + benchrun(t),
		"COMPARE_ARGS=--workload narrow --persist off --barrier 100ms --rows 2000 --count 4 --confirm 0",
	}
	log, code := script(t, env, "pr-compare.sh", "HEAD", out)
	if code == 2 || code > 3 { // 0, 1 and 3 are verdicts; 4 rounds are often inconclusive
		t.Fatalf("pr-compare.sh: exit %d\n%s", code, log)
	}
	for _, f := range []string{"report.md", "verdict.json", "base.txt", "head.txt", "metrics.txt"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(log, "comparing HEAD") {
		t.Errorf("the script did not say what it compares:\n%s", log)
	}
}

// TestPRCompareInconclusive: exit 3 passes through as 3, said to be no pass with
// the verdict's headline, and under GitHub Actions as a warning annotation.
func TestPRCompareInconclusive(t *testing.T) {
	src := t.TempDir()
	git(t, src, "init", "-q")
	git(t, src, "commit", "-q", "--allow-empty", "-m", "one")
	fake := filepath.Join(t.TempDir(), "benchrun")
	// The fake compare writes a report whose headline is inconclusive, and exits 3.
	os.WriteFile(fake, []byte(`#!/usr/bin/env bash
while [ "$1" != --out ]; do shift; done
mkdir -p "$2"
printf '## backfill-bench\n\n**? INCONCLUSIVE: 0 regressed, 0 improved, 2 inconclusive of 4 judged (cell, metric) pairs; 100%% sure**\n' >"$2/report.md"
exit 3
`), 0o755)
	out := filepath.Join(t.TempDir(), "cmp")
	log, code := script(t, []string{"BENCHRUN=" + fake, "SRC=" + src, "GITHUB_ACTIONS=true"}, "pr-compare.sh", "HEAD", out)
	if code != 3 {
		t.Fatalf("exit %d, want 3\n%s", code, log)
	}
	for _, want := range []string{
		"inconclusive (exit 3), not a pass: ? INCONCLUSIVE: 0 regressed, 0 improved, 2 inconclusive of 4 judged",
		"::warning title=benchmark inconclusive (not a pass)::? INCONCLUSIVE: 0 regressed, 0 improved, 2 inconclusive of 4 judged (cell, metric) pairs; 100%25 sure\n",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the output lacks %q:\n%s", want, log)
		}
	}
}

// TestPRCompareExpectedRegression: the expected-regression reason reaches benchrun
// compare as one argument of its flag, spaces and shell characters kept as text.
func TestPRCompareExpectedRegression(t *testing.T) {
	src := t.TempDir()
	git(t, src, "init", "-q")
	git(t, src, "commit", "-q", "--allow-empty", "-m", "one")
	fake := filepath.Join(t.TempDir(), "benchrun")
	// The fake compare records its arguments, one a line.
	os.WriteFile(fake, []byte(`#!/usr/bin/env bash
printf '%s\n' "$@" >"$ARGS_FILE"
`), 0o755)
	args := filepath.Join(t.TempDir(), "args")
	reason := `wider state rows; $(touch /tmp/x) "quoted"`
	for _, tc := range []struct {
		env  string
		want []string
	}{
		{"", nil},
		{"EXPECTED_REGRESSION=" + reason, []string{"--expected-regression", reason}},
	} {
		env := []string{"BENCHRUN=" + fake, "SRC=" + src, "ARGS_FILE=" + args}
		if tc.env != "" {
			env = append(env, tc.env)
		}
		if log, code := script(t, env, "pr-compare.sh", "HEAD", filepath.Join(t.TempDir(), "cmp")); code != 0 {
			t.Fatalf("%s: exit %d\n%s", tc.env, code, log)
		}
		data, err := os.ReadFile(args)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		i := slices.Index(got, "--expected-regression")
		switch {
		case tc.want == nil && i >= 0:
			t.Errorf("no reason given, yet the compare got %q", got)
		case tc.want != nil && (i < 0 || i+1 >= len(got) || got[i+1] != reason):
			t.Errorf("%s: compare got %q, want %q among them", tc.env, got, tc.want)
		}
	}
}

// git runs git in dir, failing the test on an error.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// fakeGH puts testdata/gh first on PATH and returns its state directory.
func fakeGH(t *testing.T) (env []string, state string) {
	t.Helper()
	state = t.TempDir()
	bin := t.TempDir()
	abs, _ := filepath.Abs("testdata/gh")
	if err := os.Symlink(abs, filepath.Join(bin, "gh")); err != nil {
		t.Fatal(err)
	}
	return []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "FAKE_GH=" + state, "GH_TOKEN=secret"}, state
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// prVerdict is a verdict.json of one judged pair, no regression.
const prVerdict = `{"base":"pr-base","head":"HEAD","regression":false,"correction":"holm","alpha":0.05,"regressions":0,"inconclusive":0,
"findings":[{"cell":"profile=mem/workload=narrow/rows=1/persist=on/scan=merged/barrier=100rows/par=2","unit":"steady-rows/s","better":1,
"base":{"median":100,"n":6},"head":{"median":101,"n":6},"pairs":6,"delta":0.01,"p":0.5,"p_adjusted":0.5,"threshold":0.03,"status":"no regression"}]}`

// aPNG is a small real PNG.
func aPNG(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 8, 8))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPRComment: the first run comments with the plots pushed to the assets branch
// and linked by absolute URL; the second run edits that comment, the bot's own,
// not another user's comment that copies its marker, and prunes the first run's
// plots; the plots of a closed PR go too. The comment is rendered from
// verdict.json by this benchrun, never copied from the artifact's report.md, and
// the verdict goes to a check run on the measured commit. A fork PR that changes
// ci/ is commented on, marked unverified, with a neutral check. The artifact's PR
// number is used only when that PR's head is the run's head commit: another PR's
// number, an unknown PR, a missing head SHA and a number that is not a number are
// refused with nothing pushed or posted, and so is an artifact with a plot that
// is not a PNG. A run that wrote no verdict (the PR's build failed) gets a comment
// saying so and a failed check, and its older run's plots are pruned.
func TestPRComment(t *testing.T) {
	env, state := fakeGH(t)
	server := t.TempDir()
	git(t, server, "init", "-q", "--bare", "o/r.git")
	// The assets branch already holds the plots of PR 5, since closed.
	seed := t.TempDir()
	git(t, seed, "init", "-q")
	os.MkdirAll(filepath.Join(seed, "pr-5", "50"), 0o755)
	os.WriteFile(filepath.Join(seed, "pr-5", "50", "old.png"), aPNG(t), 0o644)
	git(t, seed, "add", ".")
	git(t, seed, "commit", "-q", "-m", "old")
	git(t, seed, "push", "-q", filepath.Join(server, "o/r.git"), "HEAD:refs/heads/benchmark-assets")

	report := t.TempDir()
	os.MkdirAll(filepath.Join(report, "plots"), 0o755)
	os.WriteFile(filepath.Join(report, "report.md"), []byte("## backfill-bench\n\n**✓ no regression** @o/maintainers <details>\n"), 0o644)
	os.WriteFile(filepath.Join(report, "verdict.json"), []byte(prVerdict), 0o644)
	env = append(env, "REPO=o/r", "SERVER_URL="+server, "RAW_URL=https://raw.example", "BENCHRUN="+benchrun(t))
	same, fork := strings.Repeat("a7", 20), strings.Repeat("f8", 20)
	os.WriteFile(filepath.Join(state, "prs"), []byte("7\t"+same+"\to/r\n8\t"+fork+"\tsomeone/r\n5\t"+same+"\to/r\tCLOSED\n"), 0o644)
	os.WriteFile(filepath.Join(state, "files-7"), []byte("harness/compare.go\n"), 0o644)
	os.WriteFile(filepath.Join(state, "files-8"), []byte("README.md\nci/pr-compare.sh\n"), 0o644)
	// Someone else's comment with the bot's marker: never the one edited.
	os.WriteFile(filepath.Join(state, "comments-7"), []byte(`[{"id":700,"user":{"login":"mallory"},"body":"<!-- backfill-bench-report -->\n✓ no regression"}]`), 0o644)
	assets := func() string {
		out, _ := exec.Command("git", "-C", filepath.Join(server, "o/r.git"), "ls-tree", "-r", "--name-only", "benchmark-assets").Output()
		return strings.TrimSpace(string(out))
	}

	for _, step := range []struct {
		name, run, pr, head string
		plot                []byte
		code                int
		call                string // the gh call that posts the comment; "" for none
		conclusion, shows   string // the check run's conclusion; in the comment
		assets              string // the assets branch after the step
	}{
		{"same-repo PR", "100", "7", same, aPNG(t), 0, "-X POST repos/o/r/issues/7/comments", "success", "✓ no regression", "pr-7/100/variants.png"},
		{"same-repo PR, again", "101", "7", same, aPNG(t), 0, "-X PATCH repos/o/r/issues/comments/799", "success", "✓ no regression", "pr-7/101/variants.png"},
		{"fork PR that changes ci/", "102", "8", fork, aPNG(t), 0, "-X POST repos/o/r/issues/8/comments", "neutral", "**Unverified**: this PR changes the benchmark's own CI (`ci/pr-compare.sh`)", "pr-7/101/variants.png\npr-8/102/variants.png"},
		{"a run that wrote no verdict", "107", "8", fork, nil, 0, "-X PATCH repos/o/r/issues/comments/899", "failure", "ended without a verdict", "pr-7/101/variants.png"},
		{"a plot that is not a PNG", "103", "7", same, []byte("<html>"), 2, "", "", "", ""},
		{"another PR's number", "103", "7", fork, aPNG(t), 2, "", "", "", ""},
		{"an unknown PR", "104", "9", same, aPNG(t), 2, "", "", "", ""},
		{"no head SHA", "105", "7", "", aPNG(t), 2, "", "", "", ""},
		{"a number that is not one", "106", "7; rm -rf /", same, aPNG(t), 2, "", "", "", ""},
	} {
		os.WriteFile(filepath.Join(report, "pr-number"), []byte(step.pr+"\n"), 0o644)
		os.Remove(filepath.Join(report, "verdict.json"))
		os.Remove(filepath.Join(report, "plots", "variants.png"))
		if step.plot != nil {
			os.WriteFile(filepath.Join(report, "verdict.json"), []byte(prVerdict), 0o644)
			os.WriteFile(filepath.Join(report, "plots", "variants.png"), step.plot, 0o644)
		}
		os.WriteFile(filepath.Join(state, "log"), nil, 0o644)
		os.Remove(filepath.Join(state, "check"))
		before := assets()
		log, code := script(t, append(env, "RUN_ID="+step.run, "HEAD_SHA="+step.head), "pr-comment.sh", report)
		calls := readFile(t, filepath.Join(state, "log"))
		if code != step.code {
			t.Errorf("%s: exit %d, want %d\n%s", step.name, code, step.code, log)
		}
		if step.call == "" {
			if strings.Contains(calls, "-X") || assets() != before {
				t.Errorf("%s: refused, yet gh was called %q and the assets went from %q to %q", step.name, calls, before, assets())
			}
			continue
		}
		if !strings.Contains(calls, step.call) || !strings.Contains(calls, "-X POST repos/o/r/check-runs") || strings.Count(calls, "-X") != 2 {
			t.Errorf("%s: gh calls %q, want the comment posted with %q and a check run", step.name, calls, step.call)
		}
		body := readFile(t, filepath.Join(state, "body"))
		want := "](https://raw.example/o/r/benchmark-assets/pr-" + step.pr + "/" + step.run + "/variants.png)"
		if step.plot == nil {
			want = "" // no verdict, no plots
		}
		if !strings.HasPrefix(body, "<!-- backfill-bench-report -->") || !strings.Contains(body, want) || !strings.Contains(body, step.shows) {
			t.Errorf("%s: comment body %q, want the marker, %s and %q", step.name, body, want, step.shows)
		}
		if strings.Contains(body, "@o/maintainers") || strings.Contains(body, "<details>") {
			t.Errorf("%s: the comment copies the artifact's report.md: %q", step.name, body)
		}
		var check struct {
			Name, HeadSHA, Conclusion string
			Output                    struct{ Title string }
		}
		data := readFile(t, filepath.Join(state, "check"))
		json.Unmarshal([]byte(strings.ReplaceAll(data, "head_sha", "headsha")), &check)
		if check.Name != "backfill-bench verdict" || check.HeadSHA != step.head || check.Conclusion != step.conclusion || !strings.Contains(check.Output.Title, map[bool]string{true: "no regression", false: "no verdict"}[step.plot != nil]) {
			t.Errorf("%s: check run %s, want %s on %s titled with the headline", step.name, data, step.conclusion, step.head)
		}
		if got := assets(); got != step.assets {
			t.Errorf("%s: the assets branch holds %q, want %q", step.name, got, step.assets)
		}
	}
	if comments := readFile(t, filepath.Join(state, "comments-7")); strings.Count(comments, `"id"`) != 2 {
		t.Errorf("PR 7's comments %s: want mallory's and the bot's one", comments)
	}
}

// TestPushRetry: a push refused because the branch moved is fetched, rebased and
// pushed again, keeping both commits.
func TestPushRetry(t *testing.T) {
	remote := filepath.Join(t.TempDir(), "r.git")
	git(t, ".", "init", "-q", "--bare", remote)
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		git(t, dir, "init", "-q")
	}
	os.WriteFile(filepath.Join(a, "one"), []byte("1"), 0o644)
	git(t, a, "add", ".")
	git(t, a, "commit", "-q", "-m", "one")
	git(t, a, "push", "-q", remote, "HEAD:refs/heads/main")
	git(t, b, "fetch", "-q", remote, "main")
	git(t, b, "checkout", "-q", "-B", "main", "FETCH_HEAD")
	os.WriteFile(filepath.Join(a, "two"), []byte("2"), 0o644) // the other writer
	git(t, a, "add", ".")
	git(t, a, "commit", "-q", "-m", "two")
	git(t, a, "push", "-q", remote, "HEAD:refs/heads/main")
	os.WriteFile(filepath.Join(b, "three"), []byte("3"), 0o644) // this one, behind
	git(t, b, "add", ".")
	git(t, b, "commit", "-q", "-m", "three")
	log, code := script(t, []string{"PUSH_WAIT=0", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}, "push-retry.sh", b, remote, "main")
	if code != 0 || !strings.Contains(log, "try 2") {
		t.Fatalf("push-retry: exit %d, want a push on the second try\n%s", code, log)
	}
	if got := git(t, remote, "log", "--format=%s", "main"); got != "three\ntwo\none" {
		t.Errorf("main is %q, want three on top of two and one", got)
	}
}

// TestNightlyAlert runs the alert script night after night against one fake gh: a
// regression change point opens one issue, which no later night duplicates, open
// or closed; it is commented on only when the change point's night is new to it;
// newest-night alerts and improvements open none. The body gives the bisect
// command from the night before to the change's commit.
func TestNightlyAlert(t *testing.T) {
	env, state := fakeGH(t)
	env = append(env, "REPO=o/r")
	const title = "Nightly regression: steady-rows/s of profile=mem/workload=narrow/rows=1/persist=on/scan=merged/barrier=100rows/par=2 from c0200000000a"
	alerts := func(night string) string {
		return `[
{"kind":"change point","status":"regression","cell":"profile=mem/workload=narrow/rows=1/persist=on/scan=merged/barrier=100rows/par=2","unit":"steady-rows/s","night":"` + night + `","commit":"c0200000000abcdef","previous_commit":"c0100000000abcdef","delta":-0.08},
{"kind":"newest night","status":"regression","cell":"x","unit":"steady-rows/s","night":"n","commit":"c","delta":-0.1},
{"kind":"change point","status":"improvement","cell":"y","unit":"write-amp","night":"n","commit":"c","delta":-0.1}]`
	}
	file := filepath.Join(t.TempDir(), "alerts.json")
	for _, step := range []struct {
		name, night       string
		close             bool // a maintainer closes the issues first
		creates, comments int  // gh calls so far
	}{
		{"first seen", "20261103T020000Z-c02", false, 1, 0},
		{"the next night, same change point", "20261103T020000Z-c02", false, 1, 0},
		{"closed, still in the window", "20261103T020000Z-c02", true, 1, 0},
		{"moved to another night of the commit", "20261104T020000Z-c02", false, 1, 1},
		{"that night again", "20261104T020000Z-c02", false, 1, 1},
	} {
		if step.close {
			issues := readFile(t, filepath.Join(state, "issues"))
			os.WriteFile(filepath.Join(state, "issues"), []byte(strings.ReplaceAll(issues, "\topen\t", "\tclosed\t")), 0o644)
		}
		os.WriteFile(file, []byte(alerts(step.night)), 0o644)
		if log, code := script(t, env, "nightly-alert.sh", file); code != 0 {
			t.Fatalf("%s: exit %d\n%s", step.name, code, log)
		}
		calls := readFile(t, filepath.Join(state, "log"))
		if c, m := strings.Count(calls, "issue create"), strings.Count(calls, "issue comment 1 "); c != step.creates || m != step.comments {
			t.Errorf("%s: %d issues opened, %d comments on #1 so far, want %d and %d; gh calls:\n%s", step.name, c, m, step.creates, step.comments, calls)
		}
	}
	if issues := readFile(t, filepath.Join(state, "issues")); issues != "1\tclosed\t"+title+"\n" {
		t.Errorf("issues %q, want #1 for the change point, closed", issues)
	}
	body := readFile(t, filepath.Join(state, "body"))
	if !strings.HasPrefix(body, "steady-rows/s -8% from night 20261104T020000Z-c02 (commit c0200000000abcdef)") {
		t.Errorf("the comment %q does not give the change and its new night", body)
	}
	if want := "/tmp/benchrun bisect c0100000000abcdef c0200000000abcdef --cell 'profile=mem/workload=narrow/rows=1/persist=on/scan=merged/barrier=100rows/par=2'\n"; !strings.Contains(body, want) {
		t.Errorf("the comment %q does not give the bisect command %q", body, want)
	}
}

// TestNightlyPublish: publish-history commits the history without its images and
// pushes it to main; publish-pages puts the dashboard and the images on the pages
// branch, not main.
func TestNightlyPublish(t *testing.T) {
	repo := t.TempDir()
	git(t, repo, "init", "-q")
	for _, f := range []string{"nightly.sh", "push-retry.sh", "git-auth.sh"} {
		data := readFile(t, f)
		os.MkdirAll(filepath.Join(repo, "ci"), 0o755)
		os.WriteFile(filepath.Join(repo, "ci", f), []byte(data), 0o755)
	}
	os.WriteFile(filepath.Join(repo, "README.md"), []byte("x"), 0o644)
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-q", "-m", "start")
	remote := filepath.Join(t.TempDir(), "r.git")
	git(t, ".", "init", "-q", "--bare", remote)
	git(t, repo, "push", "-q", remote, "HEAD:refs/heads/main")
	night := filepath.Join(repo, "results", "history", "fp1", "20261101T020000Z-c00")
	os.MkdirAll(night, 0o755)
	os.WriteFile(filepath.Join(night, "results.txt"), []byte("commit: c00\ncommit-time: 2026-11-01T01:00:00Z\nmachine: fp1\nUnit steady-rows/s better=higher\n"+
		strings.Repeat("BenchmarkBackfill/profile=mem/workload=narrow/rows=1/persist=on/scan=merged/barrier=100rows/par=2-2 1 100 steady-rows/s\n", 6)), 0o644)
	os.WriteFile(filepath.Join(night, "nightly.md"), []byte("# night\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "results", "history", "fp1", "trends-mem.png"), []byte("png"), 0o644)

	env := []string{"BENCHRUN=" + benchrun(t), "PUSH_WAIT=0"}
	nightly := filepath.Join(repo, "ci", "nightly.sh")
	if log, code := script(t, env, nightly, "publish-history", remote); code != 0 {
		t.Fatalf("publish-history: exit %d\n%s", code, log)
	}
	onMain := git(t, remote, "ls-tree", "-r", "--name-only", "main")
	if !strings.Contains(onMain, "results/history/fp1/20261101T020000Z-c00/results.txt") || strings.Contains(onMain, ".png") {
		t.Errorf("main holds %q: want the night's results and no images", onMain)
	}
	if log, code := script(t, env, nightly, "publish-pages", remote, "https://example.invalid/commit/%s"); code != 0 {
		t.Fatalf("publish-pages: exit %d\n%s", code, log)
	}
	pages := git(t, remote, "ls-tree", "-r", "--name-only", "benchmark-pages")
	for _, want := range []string{"index.html", "fp1-mem.html", "history/fp1/trends-mem.png", "history/fp1/20261101T020000Z-c00/nightly.md"} {
		if !strings.Contains(pages, want) {
			t.Errorf("the pages branch lacks %s: %q", want, pages)
		}
	}
}

// TestK8sJob: the rendered Job fixes every shard to the commit given (and refuses a
// branch name), asks for less than the named node type allocates, with limits equal
// to requests (Guaranteed QoS), and shares no volume; apply replaces the previous
// night's Job (its pod template cannot change) and leaves it alone for a bad SHA.
func TestK8sJob(t *testing.T) {
	sha := strings.Repeat("ab", 20)
	out, code := script(t, nil, "k8s-nightly.sh", "render", sha)
	if code != 0 {
		t.Fatalf("render: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "value: "+sha) || strings.Contains(out, "__REVISION__") {
		t.Errorf("the rendered Job does not fix the commit:\n%s", out)
	}
	if strings.Contains(out, "persistentVolumeClaim") || !strings.Contains(out, "emptyDir") {
		t.Error("the pods share a volume")
	}
	req := regexp.MustCompile(`requests: \{cpu: "(\d+)", memory: (\d+)Gi\}`).FindStringSubmatch(out)
	lim := regexp.MustCompile(`limits: \{cpu: "(\d+)", memory: (\d+)Gi\}`).FindStringSubmatch(out)
	if req == nil || lim == nil || req[1] != lim[1] || req[2] != lim[2] {
		t.Errorf("requests %v and limits %v differ: not Guaranteed QoS", req, lim)
	} else if cpu, _ := strconv.Atoi(req[1]); cpu >= 4 || func() bool { gi, _ := strconv.Atoi(req[2]); return gi >= 15 }() || !strings.Contains(out, "instance-type: m6i.xlarge") {
		t.Errorf("requests %s CPUs, %s GiB do not fit an m6i.xlarge's allocatable (about 3.9 CPUs, 14.5 GiB)", req[1], req[2])
	}
	if out, code := script(t, nil, "k8s-nightly.sh", "render", "main"); code != 2 {
		t.Errorf("render main: exit %d, want 2\n%s", code, out)
	}

	// apply, twice, with a fake kubectl that, like the API server, refuses to
	// change an existing Job's pod template.
	kube, state := fakeKubectl(t)
	for _, commit := range []string{sha, strings.Repeat("cd", 20)} {
		if out, code := script(t, kube, "k8s-nightly.sh", "apply", commit); code != 0 {
			t.Fatalf("apply %s: exit %d\n%s", commit, code, out)
		}
		if job := readFile(t, filepath.Join(state, "job")); !strings.Contains(job, "value: "+commit) {
			t.Errorf("apply %s: the Job is not that commit's", commit)
		}
	}
	if calls := readFile(t, filepath.Join(state, "log")); strings.Count(calls, "delete job backfill-bench-nightly --ignore-not-found") != 2 || !strings.HasSuffix(calls, "apply -f -\n") {
		t.Errorf("kubectl calls:\n%s\nwant the previous Job deleted before each apply", calls)
	}
	if out, code := script(t, kube, "k8s-nightly.sh", "apply", "main"); code != 2 || strings.Count(readFile(t, filepath.Join(state, "log")), "delete") != 2 {
		t.Errorf("apply main: exit %d, want 2 and the Job left alone\n%s", code, out)
	}
}

// fakeKubectl points KUBECTL at testdata/kubectl and returns its state directory.
func fakeKubectl(t *testing.T) (env []string, state string) {
	t.Helper()
	state = t.TempDir()
	abs, _ := filepath.Abs("testdata/kubectl")
	return []string{"KUBECTL=" + abs, "FAKE_KUBECTL=" + state}, state
}

// TestK8sCollect: collect takes each shard's results from its succeeded pod, also
// when a retry left a failed pod of that shard, and refuses a night in which a
// shard has no succeeded pod.
func TestK8sCollect(t *testing.T) {
	results := "machine: fp1\nBenchmarkBackfill/profile=mem/workload=narrow/rows=1/persist=on/scan=merged/barrier=100rows/par=2-2 1 100 steady-rows/s\n"
	bin := benchrun(t)
	for _, tc := range []struct {
		name, job, pods string
		ok              bool
		msg             string // in the output when not ok
	}{
		{"every shard succeeded", "spec:\n  completions: 2\n", "pod-0 0 Succeeded\npod-1 1 Succeeded\n", true, ""},
		{"a shard retried", "spec:\n  completions: 2\n", "pod-0 0 Succeeded\npod-1a 1 Failed\npod-1b 1 Succeeded\n", true, ""},
		{"a shard failed", "spec:\n  completions: 2\n", "pod-0 0 Succeeded\npod-1a 1 Failed\npod-1b 1 Failed\n", false, "shard(s) 2 of 2 have no succeeded pod"},
		{"a shard still running", "spec:\n  completions: 2\n", "pod-0 0 Running\npod-1 1 Succeeded\n", false, "shard(s) 1 of 2 have no succeeded pod"},
		{"no Job", "", "", false, "apply SHA first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kube, state := fakeKubectl(t)
			if tc.job != "" {
				os.WriteFile(filepath.Join(state, "job"), []byte(tc.job), 0o644)
			}
			os.WriteFile(filepath.Join(state, "pods"), []byte(tc.pods), 0o644)
			os.WriteFile(filepath.Join(state, "results"), []byte(results), 0o644)
			hist := filepath.Join(t.TempDir(), "history")
			out, code := script(t, append(kube, "BENCHRUN="+bin, "HISTORY="+hist), "k8s-nightly.sh", "collect")
			nights, _ := filepath.Glob(filepath.Join(hist, "*", "*", "results.txt"))
			if !tc.ok {
				if code != 2 || !strings.Contains(out, tc.msg) || len(nights) != 0 {
					t.Errorf("exit %d, %d nights recorded, want 2, none and %q\n%s", code, len(nights), tc.msg, out)
				}
				return
			}
			if code > 1 {
				t.Fatalf("exit %d\n%s", code, out)
			}
			if len(nights) != 1 || strings.Count(readFile(t, nights[0]), "steady-rows/s\n") != 2 {
				t.Errorf("recorded nights %v: want one with both shards' results", nights)
			}
		})
	}
}
