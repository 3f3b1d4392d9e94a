package comment

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/backfill-bench/backfill-bench/harness"
	"github.com/backfill-bench/backfill-bench/harness/cellsdiff"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/render"
)

// hostileVerdict is a verdict.json a PR's run could write: names that try to end
// their code span, split the table row, open HTML, close the <details> of a
// comment, mention people and link elsewhere.
func hostileVerdict(cells ...string) *judge.Verdict {
	v := &judge.Verdict{Base: "pr-base", Head: "HEAD`<b>x</b>", Correction: judge.Holm, Alpha: 0.05, Regression: true, Regressions: 1}
	for i, c := range cells {
		status := judge.NoRegression
		if i == 0 {
			status = judge.Regression
		}
		v.Findings = append(v.Findings, judge.Finding{Cell: c, Unit: "steady-rows/s", Better: 1, Base: judge.Stat{Median: 100, N: 6},
			Head: judge.Stat{Median: 90, N: 6}, Pairs: 6, Delta: -0.1, P: 0.03, PAdjusted: 0.03, Threshold: 0.03, Status: status})
	}
	v.OnlyInHead = []string{"@octocat/team <img src=x onerror=alert(1)>"}
	v.Notes = []string{"ci/x`y.sh changed, so the matrix also has </details> [click](https://evil.example) @security-team"}
	return v
}

func writeJSON(t *testing.T, dir, name string, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// unescapedPipes counts the | that end a GFM table cell: those not escaped by an
// odd run of backslashes (inside code spans too, as GFM splits rows before spans).
func unescapedPipes(line string) int {
	n, slashes := 0, 0
	for _, r := range line {
		switch {
		case r == '\\':
			slashes++
			continue
		case r == '|' && slashes%2 == 0:
			n++
		}
		slashes = 0
	}
	return n
}

// TestCommentEscapesHostileVerdict renders the comment of a hostile verdict.json
// and checks each hostile value shows as its characters: no tag, no mention, no
// link, no table row split, no code span ended early.
func TestCommentEscapesHostileVerdict(t *testing.T) {
	hostile := []struct {
		name, cell string
		shows      string // what the comment holds for it
	}{
		{"a backtick ends the span", "profile=mem`</details><script>alert(1)</script>`", `profile=mem\` + "`" + `&lt;/details&gt;&lt;script&gt;alert(1)&lt;/script&gt;\` + "`"},
		{"a pipe splits the row", "a|b|c", `a\|b\|c`},
		{"an @-mention", "@backfill-bench/maintainers please merge", "@&#8203;backfill-bench/maintainers please merge"},
		{"a link and an image", "![x](https://evil.example/a.png) [ok](http://x)", `\!\[x\](https:&#8203;//evil.example/a.png) \[ok\](http:&#8203;//x)`},
		{"HTML and a details close", "<details open></details><!-- marker -->", "&lt;details open&gt;&lt;/details&gt;&lt;\\!-- marker --&gt;"},
		{"a line break into a heading", "x\n# ✓ no regression\r\n", `x \# ✓ no regression  `},
		{"bidi override", "safe\u202egnp.exe", "safegnp.exe"},
		{"a plain cell", "profile=mem/workload=narrow/rows=1/persist=on/scan=merged/barrier=100rows/par=2", "| `profile=mem/workload=narrow/rows=1/persist=on/scan=merged/barrier=100rows/par=2` |"},
	}
	var cells []string
	for _, h := range hostile {
		cells = append(cells, h.cell)
	}
	dir := t.TempDir()
	changed := filepath.Join(dir, "changed")
	os.WriteFile(changed, []byte("harness/compare.go\n.github/workflows/pr-benchmark.yml\nci/a`@x|y.sh\n"), 0o644)
	cfg := Config{Verdict: writeJSON(t, dir, "verdict.json", hostileVerdict(cells...)), Out: filepath.Join(dir, "comment.md"),
		Check: filepath.Join(dir, "check.json"), Changed: changed, RunURL: "https://github.com/o/r/actions/runs/5"}
	if err := Run(cfg); err != nil {
		t.Fatal(err)
	}
	md := readFile(t, cfg.Out)
	for _, h := range hostile {
		if !strings.Contains(md, h.shows) {
			t.Errorf("%s: the comment lacks %q", h.name, h.shows)
		}
	}
	for _, bad := range []string{"<script", "</details>", "<img", "<b>", "<details", "@octocat", "@security-team", "@backfill-bench", "@x", "](https://evil", "\u202e", "\n# "} {
		if strings.Contains(md, bad) {
			t.Errorf("the comment holds %q raw", bad)
		}
	}
	// Every table row has its 11 cell borders, and every line an even number of
	// unescaped backticks (no span left open).
	rows := 0
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| | cell") {
			rows++
			if n := unescapedPipes(line); n != 11 {
				t.Errorf("a row has %d cell borders, want 11: %s", n, line)
			}
		}
		if n := len(regexp.MustCompile("(^|[^\\\\])`").FindAllString(line, -1)); n%2 != 0 {
			t.Errorf("a line has %d unescaped backticks: %s", n, line)
		}
	}
	if rows != len(hostile) {
		t.Errorf("%d table rows, want %d:\n%s", rows, len(hostile), md)
	}
	if !strings.HasPrefix(md, "> [!CAUTION]\n> **Unverified**") || !strings.Contains(md, "`.github/workflows/pr-benchmark.yml`, ci/a\\`@&#8203;x\\|y.sh") || strings.Contains(md, "harness/compare.go") {
		t.Errorf("want the comment marked unverified, naming the ci/ and .github/ files only, escaped:\n%s", md)
	}
	var check render.CheckRun
	if err := json.Unmarshal([]byte(readFile(t, cfg.Check)), &check); err != nil || check.Conclusion != "failure" {
		t.Errorf("check run %+v (%v): want failure for the regression", check, err)
	}
	if testing.Verbose() {
		t.Logf("the comment:\n%s", md)
	}
}

// TestCommentCheckRun: the check run concludes from the verdict, not the run's
// exit status: neutral with the headline for an inconclusive verdict, one that
// judged nothing and an unverified pass; success only for a verified pass.
func TestCommentCheckRun(t *testing.T) {
	finding := func(s judge.Status) judge.Finding {
		return judge.Finding{Cell: "c", Unit: "steady-rows/s", Better: 1, Status: s}
	}
	for _, tc := range []struct {
		name       string
		v          judge.Verdict
		changed    string
		conclusion string
		title      string
	}{
		{"no regression", judge.Verdict{Findings: []judge.Finding{finding(judge.NoRegression)}}, "README.md\n", "success", "✓ no regression"},
		{"inconclusive", judge.Verdict{Findings: []judge.Finding{finding(judge.Inconclusive)}, Inconclusive: 1}, "", "neutral", "? INCONCLUSIVE: 0 regressed, 0 improved, 1 inconclusive"},
		{"unconfirmed", judge.Verdict{Findings: []judge.Finding{finding(judge.Unconfirmed)}, Inconclusive: 1}, "", "neutral", "? INCONCLUSIVE"},
		{"nothing judged", judge.Verdict{Findings: []judge.Finding{finding(judge.NotJudged)}}, "", "neutral", "✗ NOTHING JUDGED (no pair has a threshold; never a pass)"},
		{"a pass the PR's own CI reported", judge.Verdict{Findings: []judge.Finding{finding(judge.NoRegression)}}, "ci/pr-compare.sh\n", "neutral", "unverified (the PR changes ci/ or .github/): ✓ no regression"},
		{"regression", judge.Verdict{Findings: []judge.Finding{finding(judge.Regression)}, Regression: true, Regressions: 1}, ".github/x.yml\n", "failure", "✗ REGRESSION"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.v.Correction, tc.v.Alpha = judge.Holm, 0.05
			cfg := Config{Verdict: writeJSON(t, dir, "verdict.json", tc.v), Out: filepath.Join(dir, "c.md"), Check: filepath.Join(dir, "check.json")}
			if tc.changed != "" {
				cfg.Changed = filepath.Join(dir, "changed")
				os.WriteFile(cfg.Changed, []byte(tc.changed), 0o644)
			}
			if err := Run(cfg); err != nil {
				t.Fatal(err)
			}
			var check render.CheckRun
			json.Unmarshal([]byte(readFile(t, cfg.Check)), &check)
			if check.Status != "completed" || check.Conclusion != tc.conclusion || !strings.HasPrefix(check.Output.Title, tc.title) || check.Output.Summary == "" {
				t.Errorf("check run %+v, want %s titled %q…", check, tc.conclusion, tc.title)
			}
		})
	}
}

// TestCommentRefusesBadVerdict: a verdict.json outside its schema or limits is
// refused with the file named and no comment written.
func TestCommentRefusesBadVerdict(t *testing.T) {
	good := func() judge.Verdict {
		return judge.Verdict{Correction: judge.Holm, Alpha: 0.05, Findings: []judge.Finding{{Cell: "c", Unit: "u", Status: judge.NoRegression}}}
	}
	many := good()
	for len(many.Findings) <= maxFindings {
		many.Findings = append(many.Findings, many.Findings...)
	}
	long := good()
	long.Findings[0].Cell = strings.Repeat("x", 600)
	forgedPass := good()
	forgedPass.Findings[0].Status = judge.Regression // yet regression: false, 0 regressions
	for _, tc := range []struct {
		name, json, want string
	}{
		{"an unknown field", `{"correction":"holm","alpha":0.05,"findings":[],"verdict":"✓ no regression"}`, "unknown field"},
		{"two values", `{"correction":"holm","alpha":0.05,"findings":[]} {}`, "more than one JSON value"},
		{"an unknown status", `{"correction":"holm","alpha":0.05,"findings":[{"cell":"c","unit":"u","status":"fine"}]}`, "unknown status"},
		{"a number as a name", `{"correction":"holm","alpha":0.05,"findings":[{"cell":1}]}`, "cannot unmarshal"},
		{"not JSON", "<html>", "invalid character"},
		{"too large", `{"notes":["` + strings.Repeat("x", maxVerdictBytes) + `"]}`, "larger than 8 MiB"},
		{"too many findings", mustJSON(t, many), "findings, more than"},
		{"a name too long", mustJSON(t, long), "a name of 600 characters"},
		{"counts that hide a regression", mustJSON(t, forgedPass), "counts 0 regressions"},
		{"a note too long", `{"correction":"holm","alpha":0.05,"notes":["` + strings.Repeat("n", maxTextRunes+1) + `"]}`, "verdict.Notes[0]: 4097 characters"},
		{"a function name too long, deep in a why", `{"correction":"holm","alpha":0.05,"why":[{"cell":"c","cpu":{"unit":"seconds","flat":[{"name":"` + strings.Repeat("f", maxTextRunes+1) + `"}]}}]}`, "verdict.Why[0].CPU.Flat[0].Name: 4097 characters"},
		{"a unit too long as a map key", `{"correction":"holm","alpha":0.05,"detectable":{"` + strings.Repeat("u", maxTextRunes+1) + `":0.1}}`, "verdict.Detectable key: 4097 characters"},
		{"a bad correction", `{"correction":"none","alpha":0.05}`, `correction "none"`},
		{"alpha out of range", `{"correction":"holm","alpha":2}`, "alpha 2"},
		{"a p-value out of range", `{"correction":"holm","alpha":0.05,"findings":[{"cell":"c","unit":"u","p":7,"status":"no regression"}]}`, "p 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			verdict := filepath.Join(dir, "verdict.json")
			os.WriteFile(verdict, []byte(tc.json), 0o644)
			err := Run(Config{Verdict: verdict, Out: filepath.Join(dir, "c.md")})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), verdict) {
				t.Errorf("error %v, want one naming %s and %q", err, verdict, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "c.md")); err == nil {
				t.Error("a comment was written")
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// pngOf encodes a w×h image.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCommentChecksPlots: only a run's real PNGs within the limits are copied and
// linked; anything else in the plots directory refuses the artifact.
func TestCommentChecksPlots(t *testing.T) {
	ok := pngOf(t, 40, 30)
	bomb := ok[:16:16] // the signature and the IHDR chunk's start, then a huge size
	bomb = append(bomb, 0, 0, 0x40, 0, 0, 0, 0x40, 0)
	bomb = append(bomb, ok[24:]...)
	for _, tc := range []struct {
		name  string
		files map[string][]byte
		want  string // in the error; "" for accepted
	}{
		{"two plots", map[string][]byte{"deltas.png": ok, "variants.png": ok}, ""},
		{"HTML named .png", map[string][]byte{"deltas.png": []byte("<html><script>alert(1)</script></html>")}, "no PNG signature"},
		{"a PNG signature, then junk", map[string][]byte{"deltas.png": []byte("\x89PNG\r\n\x1a\njunk")}, "not a PNG"},
		{"a truncated PNG", map[string][]byte{"deltas.png": ok[:len(ok)-20]}, "not a PNG"},
		{"too many pixels", map[string][]byte{"deltas.png": bomb}, "pixels"},
		{"too large", map[string][]byte{"deltas.png": append(slicesClone(ok), make([]byte, maxPlotBytes)...)}, "larger than 4 MiB"},
		{"a name with markdown", map[string][]byte{"a)](https:evil.png": ok}, "not a plot"},
		{"not a .png", map[string][]byte{"deltas.svg": ok}, "not a plot"},
		{"too many", manyPlots(ok, maxPlots+1), "more than the 24 plots"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			plots := filepath.Join(dir, "plots")
			os.MkdirAll(plots, 0o755)
			for name, data := range tc.files {
				os.WriteFile(filepath.Join(plots, name), data, 0o644)
			}
			v := hostileVerdict("c")
			cfg := Config{Verdict: writeJSON(t, dir, "verdict.json", v), Out: filepath.Join(dir, "c.md"),
				Plots: plots, PlotsOut: filepath.Join(dir, "out"), PlotsURL: "https://raw.example/o/r/benchmark-assets/pr-7/100"}
			err := Run(cfg)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			md := readFile(t, cfg.Out)
			copied, _ := filepath.Glob(filepath.Join(cfg.PlotsOut, "*"))
			if len(copied) != 2 || !strings.Contains(md, "![deltas](https://raw.example/o/r/benchmark-assets/pr-7/100/deltas.png)") {
				t.Errorf("copied %v, comment %s", copied, md)
			}
		})
	}
	// A symbolic link is not a plot, even to a PNG.
	dir := t.TempDir()
	plots := filepath.Join(dir, "plots")
	os.MkdirAll(plots, 0o755)
	os.WriteFile(filepath.Join(dir, "real.png"), ok, 0o644)
	os.Symlink(filepath.Join(dir, "real.png"), filepath.Join(plots, "deltas.png"))
	if _, err := CopyPlots(plots, filepath.Join(dir, "out")); err == nil || !strings.Contains(err.Error(), "not a plot") {
		t.Errorf("a symlink: error %v, want not a plot", err)
	}
}

func slicesClone(b []byte) []byte { return append([]byte(nil), b...) }

func manyPlots(data []byte, n int) map[string][]byte {
	m := map[string][]byte{}
	for i := range n {
		m["p"+strings.Repeat("x", i)+".png"] = data
	}
	return m
}

// TestReportEscapesCellNames: report.md, built where the compare ran, escapes
// cell names and notes the same way (a backtick in a cell name used to end its
// code span there).
func TestReportEscapesCellNames(t *testing.T) {
	v := hostileVerdict("x`</details>|@team")
	var md bytes.Buffer
	render.WriteReport(&md, v, "benchrun compare `x`", "m", nil)
	out := md.String()
	for _, bad := range []string{"</details>", "@team", "@security-team", "<b>"} {
		if strings.Contains(out, bad) {
			t.Errorf("report.md holds %q raw:\n%s", bad, out)
		}
	}
	if !strings.Contains(out, "| x\\`&lt;/details&gt;\\|@&#8203;team |") {
		t.Errorf("report.md's row for the hostile cell:\n%s", out)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestReportEscapesChangedFiles: a changed file's name reaches report.md through
// the note of the cells-from-diff rule it fired, escaped.
func TestReportEscapesChangedFiles(t *testing.T) {
	rules := filepath.Join(t.TempDir(), "rules.json")
	os.WriteFile(rules, []byte(`[{"paths": ["bench/"], "add": {"scan": "per-vnode"}, "why": "the scan"}]`), 0o644)
	m := harness.QuickMatrix()
	notes, err := cellsdiff.Add(&m, rules, []string{"bench/`</details>|@team <img src=x>.go"})
	if err != nil || len(notes) != 1 {
		t.Fatalf("notes %q, %v", notes, err)
	}
	v := hostileVerdict("c")
	v.Notes = notes
	var md bytes.Buffer
	render.WriteReport(&md, v, "benchrun compare", "m", nil)
	want := "- note: bench/\\`&lt;/details&gt;\\|@&#8203;team &lt;img src=x&gt;.go changed, so the matrix also has scan=per-vnode (the scan)\n"
	if !strings.Contains(md.String(), want) {
		t.Errorf("report.md lacks %q:\n%s", want, md.String())
	}
}
