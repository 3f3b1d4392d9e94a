package callgrind

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func TestReadWindows(t *testing.T) {
	const head = "version: 1\ncreator: callgrind-3.19.0\n"
	window := func(n int) string {
		return head + "part: 1\ndesc: Trigger: Client Request: dump\nevents: Ir\nfn=(1) main\n3 10\nsummary: 0\ntotals: " + strconv.Itoa(n) + "\n"
	}
	end := head + "part: 3\ndesc: Trigger: Program termination\nevents: Ir\ntotals: 999\n"
	for _, tc := range []struct {
		name    string
		files   []string // out.1, out.2, …; out itself is the program's end
		want    uint64
		windows int
		err     string
	}{
		{"one window", []string{window(1234)}, 1234, 1, ""},
		{"two windows", []string{window(1000), window(234)}, 1234, 2, ""},
		{"none", nil, 0, 0, ""},
		{"summary only", []string{head + "desc: Trigger: Client Request\nevents: Ir\nsummary: 77\n"}, 77, 1, ""},
		{"another trigger", []string{window(5), strings.Replace(window(7), "Client Request", "Program termination", 1)}, 5, 1, ""},
		{"not Ir", []string{"desc: Trigger: Client Request\nevents: Dr\ntotals: 5\n"}, 0, 0, "not Ir"},
		{"cut short", []string{"desc: Trigger: Client Request\nevents: Ir\nfn=(1) main\n"}, 0, 0, "no totals line"},
		{"garbage", []string{"desc: Trigger: Client Request\nevents: Ir\ntotals: x\n"}, 0, 0, "invalid syntax"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "callgrind.out")
			if err := os.WriteFile(out, []byte(end), 0o644); err != nil {
				t.Fatal(err)
			}
			for i, text := range tc.files {
				if err := os.WriteFile(out+"."+strconv.Itoa(i+1), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, windows, err := ReadWindows(out)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want || windows != tc.windows {
				t.Fatalf("got %d in %d windows, %v; want %d in %d", got, windows, err, tc.want, tc.windows)
			}
		})
	}
}

func TestOutsideValgrind(t *testing.T) {
	if Running() {
		t.Skip("under valgrind")
	}
	var w Window
	w.Start()
	w.Stop()
	w.Stop()
}

// spin runs n steps of a xorshift generator: work of a known, fixed size per step.
//
//go:noinline
func spin(n int) uint64 {
	x := uint64(88172645463325252)
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

var sink uint64

// TestWindowChild is the process TestWindow counts: spin(out) outside the window,
// spin(in) inside, on another goroutine locked to a thread of its own (callgrind
// keeps some of its state per thread: the window must count them all).
func TestWindowChild(t *testing.T) {
	in, out := os.Getenv("CALLGRIND_TEST_IN"), os.Getenv("CALLGRIND_TEST_OUT")
	if in == "" {
		t.Skip("run by TestWindow")
	}
	nIn, _ := strconv.Atoi(in)
	nOut, _ := strconv.Atoi(out)
	sink += spin(nOut)
	var w Window
	w.Start()
	done := make(chan uint64)
	go func() {
		runtime.LockOSThread()
		done <- spin(nIn)
	}()
	sink += <-done
	w.Stop()
	sink += spin(nOut)
}

// TestWindow checks under callgrind that a window counts what runs in it, on any
// thread, and nothing outside it.
func TestWindow(t *testing.T) {
	if _, err := Check(context.Background()); err != nil {
		t.Skip(err)
	}
	count := func(in, out int) uint64 {
		file := filepath.Join(t.TempDir(), "callgrind.out")
		cmd := exec.Command("valgrind", Command(file, os.Args[0], []string{"-test.run", "^TestWindowChild$"})...)
		cmd.Env = append(os.Environ(), Env()...)
		cmd.Env = append(cmd.Env, "CALLGRIND_TEST_IN="+strconv.Itoa(in), "CALLGRIND_TEST_OUT="+strconv.Itoa(out))
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", cmd, err, msg)
		}
		n, windows, err := ReadWindows(file)
		if err != nil || windows != 1 {
			t.Fatalf("%d windows, %v", windows, err)
		}
		return n
	}
	const n = 1_000_000
	one, two, oneMoreOutside := count(n, 0), count(2*n, 0), count(n, 10*n)
	step := float64(two - one)
	t.Logf("window of %d steps: %d instructions, of %d: %d (%.2f per step)", n, one, 2*n, two, step/n)
	if step/n < 4 || step/n > 20 {
		t.Errorf("%.2f instructions per xorshift step: want a handful", step/n)
	}
	// The window's fixed overhead (its requests, the goroutine) is small; the
	// per-step cost is itself measured, so allow its error below zero.
	if over := float64(one) - step; over < -0.01*step || over > 0.05*step {
		t.Errorf("window of %d steps: %d instructions, %0.f beyond the steps", n, one, over)
	}
	// 10n steps outside the window leave the count as it was.
	if d := float64(oneMoreOutside) - float64(one); d > 0.01*step || d < -0.01*step {
		t.Errorf("work outside the window moved its count by %.0f (%d → %d)", d, one, oneMoreOutside)
	}
}

// TestCheckWithoutValgrind: a machine without valgrind is told which package to
// install.
func TestCheckWithoutValgrind(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Check(context.Background())
	if err == nil || !strings.Contains(err.Error(), "apt-get install valgrind") {
		t.Fatalf("err %v, want one naming the valgrind package", err)
	}
}

// TestReadFunctions: a function's own instructions exclude its calls' costs, and
// compressed names resolve to their first spelling, by fn= or cfn=.
func TestReadFunctions(t *testing.T) {
	text := `events: Ir
fl=(1) a.go
fn=(1) main
3 10
+1 5
cfn=(2) helper
calls=2 7
* 100
-1 1
fn=(2)
7 100
fn=(3) other
1 4
fn=(1)
9 2
`
	name := filepath.Join(t.TempDir(), "callgrind.out")
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFunctions(name)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{"main": 18, "helper": 100, "other": 4}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
}

// TestWithin: a selection's instructions are its functions' own (at any recursion
// depth) and the share of its helpers' own instructions that its calls made,
// through other helpers too, never the inclusive costs of calls.
func TestWithin(t *testing.T) {
	text := `events: Ir
fn=(1) outer
1 50
cfn=(2) sk.insert
calls=1 1
1 9999
cfn=(3) cmp
calls=1 1
1 9999
fn=(2)
1 100
cfn=(3)
calls=3 1
1 9999
cfn=(4) runtime.morestack
calls=1 1
1 9999
cfn=(5) sk.insert'2
calls=1 1
1 9999
fn=(5)
1 20
fn=(3)
1 40
cfn=(6) cmpbody
calls=4 1
1 9999
fn=(6)
1 400
fn=(7) other
cfn=(6)
calls=4 1
1 9999
`
	name := filepath.Join(t.TempDir(), "callgrind.out")
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := ReadCosts(name)
	if err != nil {
		t.Fatal(err)
	}
	in := func(fn string) bool { return strings.HasPrefix(fn, "sk.") }
	for _, tc := range []struct {
		name    string
		helpers []string
		want    float64
	}{
		// cmp: 3 of its 4 calls from sk; cmpbody: 4 of its 8 calls from cmp,
		// so 3 of 8 from sk.
		{"own and helpers' shares", []string{"cmp", "cmpbody"}, 100 + 20 + 40*3.0/4 + 400*3.0/8},
		{"own only", nil, 100 + 20},
		{"helpers out of order", []string{"cmpbody", "cmp"}, 100 + 20 + 40*3.0/4},
	} {
		if got := c.Within(in, tc.helpers); got != tc.want {
			t.Errorf("%s: %g, want %g (costs %+v)", tc.name, got, tc.want, c)
		}
	}
}

func TestUnrecursed(t *testing.T) {
	for in, want := range map[string]string{
		"f'2": "f", "f": "f", "a.(*T).m'13": "a.(*T).m", "x'": "x'", "it's": "it's",
	} {
		if got := Unrecursed(in); got != want {
			t.Errorf("Unrecursed(%q) = %q, want %q", in, got, want)
		}
	}
}
