package site

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browserEnv, when set to "required" (as .ci/run sets it), makes the browser tests
// fail instead of skipping where Chromium is missing.
const browserEnv = "BACKFILL_BENCH_BROWSER"

// artifactsEnv names a directory for the screenshots; default: the test's temp dir.
const artifactsEnv = "BACKFILL_BENCH_ARTIFACTS"

// browser starts headless Chromium (Debian's, with the flags this machine's closed
// network needs) and returns a context for it and the console errors and uncaught
// exceptions of the pages it loads.
func browser(t *testing.T) (context.Context, func() []string) {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv(browserEnv) == "required" {
			t.Fatalf("%s=required but chromium is not installed: apt-get install chromium", browserEnv)
		}
		t.Skip("chromium is not installed (apt-get install chromium; .ci/run installs it)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1000, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // start the browser and its tab
		t.Fatalf("start chromium: %v", err)
	}
	var mu sync.Mutex
	var problems []string
	marks := make(chan string, 1)
	// Subscribe here, before the caller loads a page: Console subscribes when it
	// returns, so called inside the goroutine it could miss a page's first errors.
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleLog && strings.HasPrefix(m.Text, syncMark) {
				select {
				case marks <- m.Text:
				case <-ctx.Done():
					return
				}
				continue
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	}()
	n := 0
	return ctx, func() []string {
		t.Helper()
		// Messages arrive in order: once a mark logged now is seen, so is every
		// message of the pages loaded before.
		n++
		mark := syncMark + strconv.Itoa(n)
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[int](`console.log(`+strconv.Quote(mark)+`), 0`)); err != nil {
			t.Fatalf("log %s: %v", mark, err)
		}
		for seen := ""; seen != mark; {
			select {
			case seen = <-marks:
			case <-ctx.Done():
				t.Fatalf("the console listener never saw %s: %v", mark, ctx.Err())
			}
		}
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), problems...)
	}
}

// syncMark starts the console messages browser's problems func logs to catch up.
const syncMark = "backfill-bench-sync-"

// TestSiteInBrowser loads the dashboard in headless Chromium: the pages load without
// console errors, every chart has one point per night, the step in the history is
// marked as a change point, the index links every page; a screenshot of the profile
// page is written as an artifact. A control page with a script error must be caught.
func TestSiteInBrowser(t *testing.T) {
	ctx, problems := browser(t)
	out := t.TempDir()
	rep, err := Run(Config{History: writeHistory(t), Out: out})
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx, chromedp.Navigate("file://"+rep.Pages[0]))
	if err != nil {
		t.Fatal(err)
	}
	links, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('a[href$=".html"]').length`))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+rep.Pages[1])); err != nil {
		t.Fatal(err)
	}
	counts, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify([...document.querySelectorAll('div.chart')].map(c => ({
		unit: c.dataset.unit,
		points: c.querySelectorAll('circle.point').length,
		worse: c.querySelectorAll('line.change-point.worse').length,
		drawn: c.querySelector('svg').getBoundingClientRect().height > 0})))`))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv(artifactsEnv)
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	png := filepath.Join(dir, "site-profile-page.png")
	if err := os.WriteFile(png, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", png)
	if p := problems(); len(p) > 0 {
		t.Errorf("console errors: %v", p)
	}
	if links != len(rep.Pages)-1 {
		t.Errorf("the index links %d pages, want %d", links, len(rep.Pages)-1)
	}
	var charts []struct {
		Unit          string
		Points, Worse int
		Drawn         bool
	}
	if err := json.Unmarshal([]byte(counts), &charts); err != nil {
		t.Fatal(err)
	}
	if len(charts) != 4 {
		t.Fatalf("%d charts in the page, want 4", len(charts))
	}
	for _, c := range charts {
		if c.Points != siteNights || !c.Drawn {
			t.Errorf("%s: %d points (drawn: %v), want %d", c.Unit, c.Points, c.Drawn, siteNights)
		}
		if want := map[string]int{"steady-rows/s": 1}[c.Unit]; c.Worse != want {
			t.Errorf("%s: %d change points marked, want %d", c.Unit, c.Worse, want)
		}
	}

	// The control: the listener sees a page's errors.
	control := filepath.Join(t.TempDir(), "control.html")
	if err := os.WriteFile(control, []byte(`<!DOCTYPE html><html><body><script>console.error("broken"); undefinedFunction();</script></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+control)); err != nil {
		t.Fatal(err)
	}
	if p := problems(); len(p) < 2 {
		t.Errorf("the control page's console error and exception were not seen: %v", p)
	}
}
