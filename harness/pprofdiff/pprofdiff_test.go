package pprofdiff

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// profileOf builds testdata/hot with hotRounds rounds of main.hot and returns the
// CPU profile a run of it writes.
func profileOf(t *testing.T, hotRounds string) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "hot")
	build := exec.Command("go", "build", "-o", bin, "-ldflags", "-X main.hotRounds="+hotRounds, "./testdata/hot")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	prof := filepath.Join(dir, "cpu.pprof")
	if out, err := exec.Command(bin, "-test.cpuprofile", prof).CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	return prof
}

// TestHotFunctionOnTop: two builds of one program, the head spending six times the
// base's CPU in main.hot: the diff puts main.hot first by added flat time and among
// the top by cumulative, and counts only the job's label (main.setup, outside it,
// never shows).
func TestHotFunctionOnTop(t *testing.T) {
	base, head := profileOf(t, "1"), profileOf(t, "6")
	bf, err := os.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	defer bf.Close()
	hf, err := os.Open(head)
	if err != nil {
		t.Fatal(err)
	}
	defer hf.Close()
	d, err := Compare(bf, hf, CPU, "phase", "job", 10)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("job CPU: base %.2fs, head %.2fs; flat %+v; cum %+v", d.BaseTotal, d.HeadTotal, d.Flat, d.Cum)
	if len(d.Flat) == 0 || d.Flat[0].Name != "main.hot" {
		t.Fatalf("top flat growth %+v, want main.hot", d.Flat)
	}
	if h := d.Flat[0]; h.Delta < 0.5*(h.Head-h.Head/6) {
		t.Errorf("main.hot grew by %.2fs of its %.2fs, want about five sixths", h.Delta, h.Head)
	}
	var inCum bool
	for _, f := range d.Cum {
		inCum = inCum || f.Name == "main.hot"
	}
	for _, f := range append(d.Flat, d.Cum...) {
		if f.Name == "main.setup" {
			t.Errorf("main.setup, outside the job's label, is in the diff: %+v", f)
		}
	}
	if !inCum {
		t.Errorf("main.hot is not among the top cumulative growths %+v", d.Cum)
	}
}

func TestNotACPUProfile(t *testing.T) {
	if _, err := Compare(strings.NewReader("x"), strings.NewReader("y"), CPU, "", "", 5); err == nil {
		t.Error("garbage parsed as profiles")
	}
}

func TestShortName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"main.hot", "main.hot"},
		{"github.com/cockroachdb/pebble/v2/sstable.(*singleLevelIterator[go.shape.274a,go.shape.*github.com/cockroachdb/pebble/v2/sstable/colblk.IndexIter,go.shape.5220]).SeekGE",
			"github.com/cockroachdb/pebble/v2/sstable.(*singleLevelIterator[…]).SeekGE"},
		{"p.F[go.shape.[]uint8,go.shape.int]", "p.F[…]"},
		{"p.(*T[go.shape.int]).M[go.shape.string]", "p.(*T[…]).M[…]"},
		{"p.F[int]", "p.F[int]"},
		{"p.F[go.shape.int", "p.F[go.shape.int"},
	} {
		if got := shortName(c.in); got != c.want {
			t.Errorf("shortName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
