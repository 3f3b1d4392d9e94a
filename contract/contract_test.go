package contract_test

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/contract/rates"
)

// trickyMatrix has values with the characters names may hold: '+', ':', '.', '-'.
func trickyMatrix(t *testing.T) contract.Matrix {
	var m contract.Matrix
	for d, v := range map[string]string{
		"profile": "mem,slow-disk", "workload": "bid+zipfian:1.2+update-heavy,narrow+hot-range", "rows": "0,200000",
		"persist": "off,on", "scan": "merged", "barrier": "100ms,1m30s,50krows", "par": "1,16",
		"changes": "default,2k/epoch", "limit": "none,200k-per-s",
	} {
		if err := m.Set(d, v); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func TestCellNameRoundTrip(t *testing.T) {
	cells := trickyMatrix(t).Cells()
	if len(cells) != 384 {
		t.Fatalf("%d cells, want 384", len(cells))
	}
	for _, c := range cells {
		name := c.Name()
		got, err := contract.ParseName(name)
		if err != nil {
			t.Fatal(err)
		}
		if got != c {
			t.Errorf("ParseName(%q) = %+v, want %+v", name, got, c)
		}
		// benchfmt sees the same keys in the full benchmark name.
		line := fmt.Sprintf("BenchmarkBackfill/%s-2 1 100 ns/op\n", name)
		r := benchfmt.NewReader(strings.NewReader(line), "x")
		if !r.Scan() {
			t.Fatalf("benchfmt read nothing: %v", r.Err())
		}
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			t.Fatalf("benchfmt: %v", r.Result())
		}
		base, parts := res.Name.Parts()
		if string(base) != "Backfill" {
			t.Errorf("base name %q", base)
		}
		keys := map[string]string{}
		for _, p := range parts {
			k, v, _ := strings.Cut(strings.TrimPrefix(string(p), "/"), "=")
			keys[k] = v
		}
		only := c.Only()
		for _, d := range contract.DimensionNames() {
			if _, named := keys[d]; !named && c.AtDefault(d) {
				continue // left out at its default
			}
			if keys[d] != only.Get(d) {
				t.Errorf("%s: benchfmt key %s=%q, want %q", name, d, keys[d], only.Get(d))
			}
		}
	}
}

// TestBenchRegexpSelectsOneCell checks the -test.bench pattern the harness passes
// against every cell name, level by level as the testing package matches it.
func TestBenchRegexpSelectsOneCell(t *testing.T) {
	cells := trickyMatrix(t).Cells()
	for _, c := range cells {
		levels := strings.Split(c.BenchRegexp(), "/")
		for _, other := range cells {
			names := append([]string{"BenchmarkBackfill"}, strings.Split(other.Name(), "/")...)
			match := len(levels) == len(names)
			for i := 0; match && i < len(levels); i++ {
				match = regexp.MustCompile(levels[i]).MatchString(names[i])
			}
			if match != (c == other) {
				t.Errorf("pattern of %s matches %s: %v", c.Name(), other.Name(), match)
			}
		}
	}
}

func TestMatrixSetErrors(t *testing.T) {
	for _, tc := range [][2]string{
		{"rows", "-1"}, {"rows", "many"}, {"persist", "yes"}, {"scan", "sideways"}, {"barrier", "0s"},
		{"barrier", "soon"}, {"par", "0"}, {"workload", "a/b"}, {"profile", "a/b"}, {"color", "red"}, {"par", " , "},
	} {
		var m contract.Matrix
		if err := m.Set(tc[0], tc[1]); err == nil {
			t.Errorf("Set(%s, %q): no error", tc[0], tc[1])
		}
	}
}

func TestParseNameErrors(t *testing.T) {
	good := contract.Cell{Profile: "mem", Workload: "narrow", Rows: 1, Scan: "merged", Barrier: rates.Every(time.Second), Par: 1}.Name()
	for _, name := range []string{
		"", "profile=mem", strings.Replace(good, "persist=off", "persist=maybe", 1),
		strings.Replace(good, "rows=1", "rows=x", 1), good + "/color=red", good + "/par=2", "junk/" + good,
	} {
		if _, err := contract.ParseName(name); err == nil {
			t.Errorf("ParseName(%q): no error", name)
		}
	}
}

func TestLabel(t *testing.T) {
	for in, want := range map[string]string{
		"Backfill/profile=mem/workload=narrow/rows=1/persist=on/scan=merged/barrier=1s/par=2-2": "profile=mem/workload=narrow/rows=1/persist=on/scan=merged/barrier=1s/par=2",
		"Backfill/profile=mem/par=2":   "profile=mem/par=2",
		"RawCopy/profile=mem/rows=1-8": "RawCopy/profile=mem/rows=1",
	} {
		if got := contract.Label(in); got != want {
			t.Errorf("Label(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestQuantileNearestRank(t *testing.T) {
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for q, want := range map[float64]float64{0: 1, 0.1: 1, 0.11: 2, 0.5: 5, 0.51: 6, 0.99: 10, 1: 10} {
		if got := contract.Quantile(v, q); got != want {
			t.Errorf("Quantile(1..10, %v) = %v, want %v", q, got, want)
		}
	}
	if contract.Quantile(nil, 0.5) != 0 {
		t.Error("Quantile of nothing should be 0")
	}
}

// TestArgsParseWithRegisteredFlags: the command line Args builds parses with the
// flags Register declares (plus testing's), back to the same cell.
func TestArgsParseWithRegisteredFlags(t *testing.T) {
	for _, c := range trickyMatrix(t).Cells() {
		fs := flag.NewFlagSet("bench", flag.ContinueOnError)
		for _, name := range contract.TestingFlags {
			fs.String(name, "", "")
		}
		f := contract.Register(fs, contract.Matrix{})
		if err := fs.Parse(c.Args("t.jsonl", []string{"/a.json", "/b.json"})); err != nil {
			t.Fatal(err)
		}
		m, err := f.Matrix()
		if err != nil {
			t.Fatal(err)
		}
		if cells := m.Cells(); len(cells) != 1 || cells[0] != c {
			t.Errorf("Args of %s parse back to %v", c.Name(), cells)
		}
		if *f.Trace != "t.jsonl" || len(f.ProfileFileList()) != 2 {
			t.Errorf("trace %q, profile files %v", *f.Trace, f.ProfileFileList())
		}
	}
}

func TestDirectionDefaults(t *testing.T) {
	none := benchfmt.UnitMetadataMap{}
	for unit, want := range map[string]int{
		"rows/s": 1, "MB/s": 1, "sec/op": -1, "barrier-p99-sec": -1, "write-amp": -1, "B/op": -1,
		"allocs/op": -1, "fs-wal-B/op": -1, "widgets": 0,
	} {
		if got := contract.Better(none, unit); got != want {
			t.Errorf("contract.Better(%s) = %d, want %d", unit, got, want)
		}
	}
	marked := benchfmt.UnitMetadataMap{}
	u := benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: "widgets", Key: "better"}, Value: "higher"}
	marked[u.UnitMetadataKey] = &u
	if contract.Better(marked, "widgets") != 1 {
		t.Error("a Unit line's direction is not used")
	}
}

// TestReadLenientSkipsAsBenchstat: what benchstat skips with a warning (go test's
// log lines, a name with no values, conflicting Unit lines) and an unknown unit are
// warnings naming file:line, and every result is still read; what would poison a
// known unit's statistics is still refused.
func TestReadLenientSkipsAsBenchstat(t *testing.T) {
	const good = "BenchmarkX-2 1 100 ns/op 5 rows/s\n"
	for _, tc := range []struct {
		name, text string
		results    int
		warn       string // "" none
	}{
		{"go test log", "goos: linux\n" + good + "Benchmarking took 1.2s\nPASS\nok  \tpkg\t1.3s\n", 1, "f.txt:3: "},
		{"name with no values", good + "BenchmarkY\n", 1, `f.txt:2: "BenchmarkY" is a benchmark name with no values`},
		{"conflicting unit lines", "Unit rows/s better=higher\nUnit rows/s better=lower\n" + good, 1, "f.txt:2: "},
		{"unknown unit", good + "BenchmarkX-2 1 100 ns/op 7 frobs/op\n", 2, `f.txt:2: unit "frobs/op" is not one this suite reports`},
		{"negative unknown unit", "BenchmarkX-2 1 100 ns/op -7 frobs/op\n", 1, `unit "frobs/op"`},
		{"clean", good, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "f.txt")
			os.WriteFile(f, []byte(tc.text), 0o644)
			r, err := contract.ReadLenient(f)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Results) != tc.results {
				t.Errorf("%d results, want %d", len(r.Results), tc.results)
			}
			got := strings.Join(r.Warnings, "\n")
			if (tc.warn == "") != (got == "") || !strings.Contains(got, tc.warn) {
				t.Errorf("warnings %q, want one containing %q", got, tc.warn)
			}
		})
	}
}

// TestDirectionsComeFromTheContract: a Unit line that flips a unit the contract
// knows changes nothing but a note; one the contract does not know is the file's.
func TestDirectionsComeFromTheContract(t *testing.T) {
	f := filepath.Join(t.TempDir(), "f.txt")
	os.WriteFile(f, []byte("Unit job-allocs/op better=higher\nUnit ns/op better=higher\nUnit frobs/op better=higher\nBenchmarkX 1 100 ns/op 5 job-allocs/op 3 frobs/op\n"), 0o644)
	r, err := contract.ReadLenient(f)
	if err != nil {
		t.Fatal(err)
	}
	for unit, want := range map[string]int{contract.UnitAllocs: -1, "sec/op": -1, "frobs/op": 1} {
		if got := contract.Better(r.Units, unit); got != want {
			t.Errorf("Better(%s) = %d, want %d", unit, got, want)
		}
	}
	conflicts := strings.Join(contract.DirectionConflicts(r.Units), "\n")
	for _, want := range []string{"job-allocs/op: a results file declares better=higher, the contract lower", "sec/op: a results file declares better=higher"} {
		if !strings.Contains(conflicts, want) {
			t.Errorf("conflicts %q lack %q", conflicts, want)
		}
	}
	if strings.Contains(conflicts, "frobs") {
		t.Errorf("a unit the contract does not know is no conflict: %q", conflicts)
	}
}

// TestReadFilesRefusesBadInput: every way a results file can poison the
// statistics is an error naming the file, the line where there is one, and the fix.
func TestReadFilesRefusesBadInput(t *testing.T) {
	const good = "BenchmarkBackfill/profile=mem/workload=narrow/rows=1/persist=off/scan=merged/barrier=1s/par=2-2 1 100 ns/op 5 rows/s\n"
	for _, tc := range []struct {
		name, text, want string
	}{
		{"NaN", good + "BenchmarkBackfill/profile=mem/workload=narrow/rows=1/persist=on/scan=merged/barrier=1s/par=2-2 1 100 ns/op NaN rows/s\n", "f.txt:2: BenchmarkBackfill/profile=mem/workload=narrow/rows=1/persist=on/scan=merged/barrier=1s/par=2-2: NaN rows/s is not a finite number"},
		{"+Inf", good + "BenchmarkX 1 +Inf ns/op\n", "f.txt:2: BenchmarkX: +Inf ns/op is not a finite number"},
		{"negative", "BenchmarkX 1 100 ns/op -5 rows/s\n", "f.txt:1: BenchmarkX: -5 rows/s is negative"},
		{"unit cut in the middle", "BenchmarkX 1 100 ns/op 5 rows/\n", `f.txt:1: unit "rows/" is not one this suite reports`},
		{"line cut inside its name", good + "BenchmarkBackfill/profile=mem/work\n", "f.txt:2: "},
		{"empty", "", "f.txt: no benchmark results"},
		{"garbage", "hello\nworld\n", "f.txt: no benchmark results"},
		{"conflicting unit lines", "Unit rows/s better=higher\nUnit rows/s better=lower\n" + good, "f.txt:2: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "f.txt")
			os.WriteFile(f, []byte(tc.text), 0o644)
			_, _, err := contract.ReadFiles(f)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	f := filepath.Join(t.TempDir(), "f.txt")
	os.WriteFile(f, []byte(good+"BenchmarkX 1 0 ns/op 0 state-ns/barrier 3 B/op\n"), 0o644)
	if rs, _, err := contract.ReadFiles(f); err != nil || len(rs) != 2 {
		t.Errorf("a good file: %d results, %v", len(rs), err)
	}
}

// FuzzReadFiles: whatever the bytes, reading ends in results or a clean error.
func FuzzReadFiles(f *testing.F) {
	f.Add([]byte("BenchmarkX 1 100 ns/op 5 rows/s\n"))
	f.Add([]byte("Unit rows/s better=higher\ncommit: 1\nBenchmarkX 1 NaN rows/s\n"))
	f.Add([]byte("BenchmarkBackfill/profile=mem/work\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		name := filepath.Join(t.TempDir(), "f.txt")
		os.WriteFile(name, data, 0o644)
		rs, _, err := contract.ReadFiles(name)
		if err == nil {
			for _, r := range rs {
				for _, v := range r.Values {
					if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) || v.Value < 0 {
						t.Fatalf("accepted %v %s", v.Value, v.Unit)
					}
				}
			}
		}
	})
}

// TestOptionalDimensionsInNames: read modes and checkpoint frequencies are left out
// of names and bench arguments at their defaults, named before par otherwise, parse
// back, and bad values are refused.
func TestOptionalDimensionsInNames(t *testing.T) {
	tests := []struct {
		dim, values, suffix, bad string
	}{
		{"ckpt", "1,10", "/ckpt=10/par=2", "0"},
		{"read", "uncommitted,checkpoint", "/read=checkpoint/par=2", "committed"},
		{"vnodes", "256,4096", "/vnodes=4096/par=2", "0"},
		{"chunk", "256,1024", "/chunk=1024/par=2", "1"},
		{"limit", "none,200k/s..50k/s@50%", "/limit=200k-per-s..50k-per-s@50%/par=2", "0/s"},
	}
	for _, tt := range tests {
		t.Run(tt.dim, func(t *testing.T) {
			var m contract.Matrix
			for d, v := range map[string]string{"profile": "mem", "workload": "narrow", "rows": "1", "persist": "on", "scan": "merged", "barrier": "100rows", tt.dim: tt.values, "par": "2"} {
				if err := m.Set(d, v); err != nil {
					t.Fatal(err)
				}
			}
			cells := m.Cells()
			if len(cells) != 2 || strings.Contains(cells[0].Name(), tt.dim) || !strings.HasSuffix(cells[1].Name(), tt.suffix) {
				t.Fatalf("names %q, %q", cells[0].Name(), cells[1].Name())
			}
			for _, c := range cells {
				back, err := contract.ParseName(c.Name())
				if err != nil || back != c {
					t.Errorf("ParseName(%q) = %+v, %v; want %+v", c.Name(), back, err, c)
				}
			}
			if args := strings.Join(cells[0].Args("", nil), " "); strings.Contains(args, "-"+tt.dim) {
				t.Errorf("the default %s is passed to the bench binary: %s", tt.dim, args)
			}
			if args := strings.Join(cells[1].Args("", nil), " "); !strings.Contains(args, "-"+tt.dim) {
				t.Errorf("the %s of %s is not passed to the bench binary: %s", tt.dim, cells[1].Name(), args)
			}
			if err := m.Set(tt.dim, tt.bad); err == nil {
				t.Errorf("%s %s accepted", tt.dim, tt.bad)
			}
			if _, err := contract.ParseName(strings.Replace(cells[1].Name(), tt.suffix[1:strings.LastIndex(tt.suffix, "/")], tt.dim+"="+tt.bad, 1)); err == nil {
				t.Errorf("a name with %s=%s parsed", tt.dim, tt.bad)
			}
		})
	}
}

// TestRecoveryNames: a recovery's name is its cell's name with crash=… after rows=,
// so it stays what it was at the defaults and cells that differ only in an optional
// dimension get different recovery names.
func TestRecoveryNames(t *testing.T) {
	base := contract.Cell{Profile: "mem", Workload: "narrow", Rows: 100, Scan: "merged", Barrier: rates.Cadence{Rows: 2500}, Par: 2}
	const old = "profile=mem/workload=narrow/rows=100/crash=90%/persist=off/scan=merged/barrier=2500rows/par=2"
	if got := base.RecoveryName("90%"); got != old {
		t.Errorf("at the defaults: %q, want the name recoveries always had, %q", got, old)
	}
	for _, tt := range []struct {
		dim  string
		cell func(c contract.Cell) contract.Cell
	}{
		{"read", func(c contract.Cell) contract.Cell { c.Read = "checkpoint"; return c }},
		{"ckpt", func(c contract.Cell) contract.Cell { c.Ckpt = 10; return c }},
		{"vnodes", func(c contract.Cell) contract.Cell { c.Vnodes = 16; return c }},
		{"changes", func(c contract.Cell) contract.Cell { c.Changes = rates.ChangeRate{N: 5, Per: "epoch"}; return c }},
		{"limit", func(c contract.Cell) contract.Cell { c.Limit = rates.RateLimit{Rate: 1000}; return c }},
		{"chunk", func(c contract.Cell) contract.Cell { c.Chunk = 1024; return c }},
	} {
		t.Run(tt.dim, func(t *testing.T) {
			c := tt.cell(base)
			got := c.RecoveryName("90%")
			if got == old || !strings.Contains(got, "/"+tt.dim+"=") {
				t.Errorf("%s=%s: recovery name %q, want it named, unlike the default's", tt.dim, c.Only().Get(tt.dim), got)
			}
			if want := strings.Replace(c.Name(), "/persist=", "/crash=90%/persist=", 1); got != want {
				t.Errorf("recovery name %q, want the cell's name with the crash point: %q", got, want)
			}
		})
	}
}

// TestImpossibleCellsSkipped: a sweep of vnodes and par keeps the cells where every
// actor owns a vnode, says which pairs it left out, and is refused, naming both
// flags, only when no cell is left.
func TestImpossibleCellsSkipped(t *testing.T) {
	for _, tc := range []struct {
		name, vnodes, par string
		cells             int      // kept, of 2 per pair (persist off and on)
		impossible        []string // Impossible's lines
		err               string   // in Validate's error; "": none
	}{
		{"the scale sweep", "1,256,4096", "1,2,4,8", 18, []string{"vnodes=1 with par=2,4,8 (6 cells): each actor owns at least one vnode"}, ""},
		{"all possible", "256,4096", "1,8", 8, nil, ""},
		{"one pair short", "2,4", "4", 2, []string{"vnodes=2 with par=4 (2 cells): each actor owns at least one vnode"}, ""},
		{"the default vnodes", "", "8,256", 4, nil, ""},
		{"none left", "1,2", "4,8", 0, []string{"vnodes=1 with par=4,8 (4 cells)", "vnodes=2 with par=4,8 (4 cells)"}, "--vnodes 1,2 with --par 4,8: no cell left, as each actor owns at least one vnode; give at least 4 vnodes or at most 2 actors"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m contract.Matrix
			dims := map[string]string{"profile": "mem", "workload": "narrow", "rows": "1000", "persist": "off,on", "scan": "merged", "barrier": "100rows", "par": tc.par}
			if tc.vnodes != "" {
				dims["vnodes"] = tc.vnodes
			}
			for d, v := range dims {
				if err := m.Set(d, v); err != nil {
					t.Fatal(err)
				}
			}
			cells := m.Cells()
			if len(cells) != tc.cells {
				t.Errorf("%d cells, want %d", len(cells), tc.cells)
			}
			for _, c := range cells {
				if c.Par > c.VnodeCount() {
					t.Errorf("kept %s", c.Name())
				}
			}
			got := m.Impossible()
			if len(got) != len(tc.impossible) {
				t.Fatalf("Impossible() = %q, want %d lines like %q", got, len(tc.impossible), tc.impossible)
			}
			for i, want := range tc.impossible {
				if !strings.HasPrefix(got[i], want) {
					t.Errorf("line %d = %q, want it to start with %q", i, got[i], want)
				}
			}
			err := m.Validate()
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || err.Error() != tc.err) {
				t.Errorf("Validate() = %v, want %q", err, tc.err)
			}
		})
	}
}

// TestWorkDrivenChangesPerEpoch: a change rate per second is refused with a barrier
// cut by rows read, and the error gives the per-epoch rate to use instead.
func TestWorkDrivenChangesPerEpoch(t *testing.T) {
	var m contract.Matrix
	m.Set("barrier", "50krows")
	m.Set("changes", "10k/s")
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "--changes 500/epoch") {
		t.Errorf("a rate per second with a work-driven barrier: %v", err)
	}
	m.Set("changes", "0/s") // snapshot only: no rate to convert
	if err := m.Validate(); err != nil {
		t.Errorf("a snapshot-only work-driven job: %v", err)
	}
}

// TestPausedLimitNeedsTimeBarrier: a scan paused at its start with barriers cut by
// rows read would never resume, so the matrix is refused.
func TestPausedLimitNeedsTimeBarrier(t *testing.T) {
	var m contract.Matrix
	for d, v := range map[string]string{"profile": "mem", "workload": "narrow", "rows": "1000", "persist": "on", "scan": "merged", "barrier": "100rows", "limit": "0/s..10k/s@1s", "par": "2"} {
		if err := m.Set(d, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "time barrier") {
		t.Errorf("a paused start with barriers cut by rows: Validate() = %v, want it refused", err)
	}
}
