package callgrind

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestReadTotal(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       uint64
		err        string
	}{
		{"totals", "version: 1\nevents: Ir\nfn=(1) main\n3 10\nsummary: 1234\ntotals: 1234\n", 1234, ""},
		{"summary only", "events: Ir\nsummary: 77\n", 77, ""},
		{"summary 0 before totals", "events: Ir\nsummary: 0\ntotals: 12\n", 12, ""},
		{"more events", "events: Ir Dr\ntotals: 5 9\n", 5, ""},
		{"not Ir", "events: Dr\ntotals: 5\n", 0, "not Ir"},
		{"cut short", "events: Ir\nfn=(1) main\n", 0, "no totals line"},
		{"garbage", "events: Ir\ntotals: x\n", 0, "invalid syntax"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := filepath.Join(t.TempDir(), "callgrind.out")
			if err := os.WriteFile(name, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ReadTotal(name)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %d, %v; want %d", got, err, tc.want)
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
// spin(in) inside, from another goroutine.
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
	go func() { done <- spin(nIn) }()
	sink += <-done
	w.Stop()
	sink += spin(nOut)
}

// TestWindow checks under callgrind that a window counts what runs in it, on any
// goroutine, and nothing outside it.
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
		n, err := ReadTotal(file)
		if err != nil {
			t.Fatal(err)
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
	// The window's fixed overhead (its requests, the goroutine) is small.
	if over := float64(one) - step; over < 0 || over > 0.05*step {
		t.Errorf("window of %d steps: %d instructions, %0.f beyond the steps", n, one, over)
	}
	// 10n steps outside the window leave the count as it was.
	if d := float64(oneMoreOutside) - float64(one); d > 0.01*step || d < -0.01*step {
		t.Errorf("work outside the window moved its count by %.0f (%d → %d)", d, one, oneMoreOutside)
	}
}
