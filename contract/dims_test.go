package contract_test

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/contracttest"
)

// TestNewDimension: a dimension added to the table is a flag of the bench binary,
// a key of names before par (left out at its default, so old names stay), parses
// back, is an argument of the bench binary away from its default, and crosses in a
// matrix.
func TestNewDimension(t *testing.T) {
	contracttest.Colour(t)
	if _, err := contract.NewDimension(contract.Dimension{Name: "colour", Default: "x", Parse: func(v string) (string, error) { return v, nil }}); err == nil {
		t.Error("a second colour dimension: no error")
	}
	names := contract.DimensionNames()
	if i := slices.Index(names, "colour"); i != len(names)-2 || names[len(names)-1] != "par" {
		t.Fatalf("dimensions %v: want colour just before par", names)
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := contract.Register(fs, contract.Matrix{})
	if fl := fs.Lookup("colour"); fl == nil || fl.DefValue != "red" || !strings.Contains(fl.Usage, "test colours") {
		t.Fatalf("flag colour: %+v", fl)
	}
	if err := fs.Parse([]string{"-profile", "mem", "-workload", "narrow", "-rows", "10", "-persist", "off,on", "-scan", "merged",
		"-barrier", "1s", "-par", "2", "-colour", "red,blue"}); err != nil {
		t.Fatal(err)
	}
	m, err := f.Matrix()
	if err != nil {
		t.Fatal(err)
	}
	cells := m.Cells()
	if len(cells) != 4 {
		t.Fatalf("%d cells, want 4 (colour × persist)", len(cells))
	}
	for i, want := range []string{
		"profile=mem/workload=narrow/rows=10/persist=off/scan=merged/barrier=1s/par=2",
		"profile=mem/workload=narrow/rows=10/persist=on/scan=merged/barrier=1s/par=2",
		"profile=mem/workload=narrow/rows=10/persist=off/scan=merged/barrier=1s/colour=blue/par=2",
		"profile=mem/workload=narrow/rows=10/persist=on/scan=merged/barrier=1s/colour=blue/par=2",
	} {
		c := cells[i]
		if c.Name() != want {
			t.Errorf("cell %d: %s, want %s", i, c.Name(), want)
		}
		if got, err := contract.ParseName(c.Name()); err != nil || got != c {
			t.Errorf("ParseName(%s) = %+v, %v; want %+v", c.Name(), got, err, c)
		}
		args := strings.Join(c.Args("", nil), " ")
		if blue := c.Value("colour") == "blue"; blue != strings.Contains(args, "-colour blue") || strings.Contains(args, "-colour red") {
			t.Errorf("cell %s: args %s", c.Name(), args)
		}
		// The arguments parse with the registered flags back to the cell alone.
		fs2 := flag.NewFlagSet("bench", flag.ContinueOnError)
		fs2.SetOutput(io.Discard)
		for _, n := range contract.TestingFlags {
			fs2.String(n, "", "")
		}
		f2 := contract.Register(fs2, contract.Matrix{})
		if err := fs2.Parse(c.Args("", nil)); err != nil {
			t.Fatal(err)
		}
		if m2, err := f2.Matrix(); err != nil || !slices.Equal(m2.Cells(), []contract.Cell{c}) {
			t.Errorf("cell %s: args give %v, %v", c.Name(), m2.Cells(), err)
		}
	}
	if cells[0].PairKey() != cells[1].PairKey() || cells[0].PairKey() == cells[2].PairKey() {
		t.Error("pair keys: persist off and on must share one, colours not")
	}
	if err := m.Set("colour", "green"); err == nil || !strings.Contains(err.Error(), "want red or blue") {
		t.Errorf("Set(colour, green): %v", err)
	}
	if _, err := contract.ParseName(strings.Replace(cells[2].Name(), "blue", "green", 1)); err == nil {
		t.Error("ParseName with colour=green: no error")
	}
}

// FuzzNameRoundTrip: any cell a matrix makes from values its flags accept formats
// to a name that parses back to the same cell, and any name ParseName accepts
// formats to a name that parses to the same cell.
func FuzzNameRoundTrip(f *testing.F) {
	f.Add("mem", "bid+zipfian:1.2", "1_000", "on", "per-vnode", "50krows", "500/epoch", "200k/s..50k/s@50%", "checkpoint", "10", "4", "1024", "3")
	f.Add("x", "narrow", "0", "off", "merged", "1m30s", "default", "none", "uncommitted", "1", "256", "256", "1")
	f.Add("slow-disk", "wide+hot-range", "7", "off", "snapshot", "100ms", "0/s", "0/s..100k/s@1500ms", "uncommitted", "2", "1", "2", "1")
	f.Fuzz(func(t *testing.T, profile, workload, rows, persist, scan, barrier, changes, limit, read, ckpt, vnodes, chunk, par string) {
		var m contract.Matrix
		for i, v := range []string{profile, workload, rows, persist, scan, barrier, changes, limit, read, ckpt, vnodes, chunk, par} {
			if strings.Contains(v, ",") || m.Set(contract.DimensionNames()[i], v) != nil {
				return
			}
		}
		for _, c := range m.Cells() {
			got, err := contract.ParseName(c.Name())
			if err != nil || got != c {
				t.Fatalf("ParseName(%q) = %+v, %v; want %+v", c.Name(), got, err, c)
			}
		}
		name := strings.Join([]string{"profile=" + profile, "workload=" + workload, "rows=" + rows, "persist=" + persist,
			"scan=" + scan, "barrier=" + barrier, "limit=" + limit, "par=" + par}, "/")
		if c, err := contract.ParseName(name); err == nil {
			if again, err := contract.ParseName(c.Name()); err != nil || again != c {
				t.Fatalf("%s parses to %+v named %s, which parses to %+v, %v", name, c, c.Name(), again, err)
			}
		}
	})
}
