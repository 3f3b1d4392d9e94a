package contract

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// Config keys the harness adds to every result, beside the bench binary's own
// (goos, goarch, pkg, cpu).
const (
	ConfigCommit     = "commit"
	ConfigCommitTime = "commit-time"
	ConfigBranch     = "branch"
	ConfigDirty      = "dirty"
	ConfigGo         = "go"
	ConfigPebble     = "pebble"
	ConfigCores      = "cores"
	ConfigGOMAXPROCS = "gomaxprocs"
	ConfigMachine    = "machine" // fingerprint: results compare within one
	ConfigProfile    = "profile"
	ConfigDisk       = "disk"
	ConfigPairing    = "pairing" // "duet" when a pair's two runs shared the machine at once; absent: one after the other
	ConfigWarmup     = "warmup"  // "1 job" when each timed job followed an untimed one in its process; absent: the first
)

// CompareIgnore are the config keys that differ between two commits by nature;
// a comparison ignores them (as `benchstat -ignore`) so both sides share a table.
// The machine is not among them: results of two machines are not comparable.
const CompareIgnore = ConfigCommit + "," + ConfigCommitTime + "," + ConfigBranch + "," + ConfigDirty + "," + ConfigGo + "," + ConfigPebble

// ShortCommit is the abbreviated commit that names directories and labels: 12
// hex digits, or "nogit" when there is none.
func ShortCommit(c string) string {
	if c == "" {
		return "nogit"
	}
	return c[:min(len(c), 12)]
}

// ReadFiles reads results files, the one reader every command uses; each result
// keeps its file name as its .file config, as benchstat's columns do. It refuses
// what ReadLenient would only warn about (see there), and a file with no results.
func ReadFiles(names ...string) ([]*benchfmt.Result, benchfmt.UnitMetadataMap, error) {
	r, err := ReadLenient(names...)
	if err != nil {
		return nil, nil, err
	}
	if len(r.Warnings) > 0 {
		return nil, nil, errors.New(r.Warnings[0])
	}
	return r.Results, r.Units, nil
}

// Read is what ReadLenient read: the results, the files' unit metadata, and a
// warning per line or value it skipped.
type Read struct {
	Results  []*benchfmt.Result
	Units    benchfmt.UnitMetadataMap
	Warnings []string
}

// ReadLenient reads results files as benchstat does: a line that is not benchfmt
// (go test's log, a line cut short, a Unit line that disagrees with another) and
// a name with no values are skipped with a warning naming file:line, and a unit
// this suite does not know is kept (compared, never judged) with a warning. It
// refuses, naming file:line and the fix, what would poison the statistics of a
// unit it knows (a value that is not finite, a negative value) and a file with no
// results at all.
func ReadLenient(names ...string) (Read, error) {
	out := Read{}
	fullNames := map[string][]string{} // per file
	unknown := map[string]string{}     // unit → where first seen
	files := benchfmt.Files{Paths: names}
	for files.Scan() {
		switch rec := files.Result().(type) {
		case *benchfmt.Result:
			if err := checkResult(rec); err != nil {
				return Read{}, err
			}
			file, line := rec.Pos()
			for _, v := range rec.Values {
				if u := origUnit(v); !KnownUnit(u) && unknown[u] == "" {
					unknown[u] = fmt.Sprintf("%s:%d", file, line)
				}
			}
			out.Results = append(out.Results, rec.Clone())
			fullNames[file] = append(fullNames[file], "Benchmark"+string(rec.Name))
		case *benchfmt.SyntaxError:
			out.Warnings = append(out.Warnings, fmt.Sprintf("%v: not a benchfmt line (or a Unit line that disagrees with another), skipped as benchstat does; rerun the job or remove the line if it was a result", rec))
		}
	}
	if err := files.Err(); err != nil {
		return Read{}, err
	}
	for _, name := range names {
		if len(fullNames[name]) == 0 {
			return Read{}, fmt.Errorf("%s: no benchmark results in the file: is it a results file (results.txt of benchrun run, or go test -bench output)?", name)
		}
		w, err := checkNameLines(name, fullNames[name])
		if err != nil {
			return Read{}, err
		}
		out.Warnings = append(out.Warnings, w...)
	}
	for _, u := range slices.Sorted(maps.Keys(unknown)) {
		out.Warnings = append(out.Warnings, fmt.Sprintf("%s: unit %q is not one this suite reports (%s): compared, never judged", unknown[u], u, knownList()))
	}
	out.Units = files.Units()
	return out, nil
}

func origUnit(v benchfmt.Value) string {
	if v.OrigUnit != "" {
		return v.OrigUnit
	}
	return v.Unit
}

// checkNameLines warns of a line that holds a benchmark name only, unless it heads
// results of that benchmark (go test -v prints such headers): benchfmt skips those
// lines, so a result cut short inside its name would otherwise vanish unsaid.
func checkNameLines(name string, fullNames []string) ([]string, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var warnings []string
	for i, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "Benchmark") || strings.ContainsAny(l, " \t") {
			continue
		}
		heads := false
		for _, f := range fullNames {
			if f == l || strings.HasPrefix(f, l+"/") || strings.HasPrefix(f, l+"-") {
				heads = true
				break
			}
		}
		if !heads {
			warnings = append(warnings, fmt.Sprintf("%s:%d: %q is a benchmark name with no values, and no result follows it: a line cut short, skipped; rerun the job or remove the line", name, i+1, l))
		}
	}
	return warnings, nil
}

// standardUnits are the testing package's units, which every benchmark may report.
var standardUnits = []string{"sec/op", "B/op", "allocs/op", "B/s"}

// KnownUnit reports whether unit (as written or as benchfmt tidies it) is one this
// suite reports.
func KnownUnit(unit string) bool {
	unit = Tidy(unit)
	for _, u := range Units() {
		if Tidy(u.Unit) == unit {
			return true
		}
	}
	for _, c := range FSCategories {
		if FSUnit(c) == unit {
			return true
		}
	}
	return slices.Contains(standardUnits, unit)
}

// checkResult refuses a value the statistics cannot take.
func checkResult(r *benchfmt.Result) error {
	file, line := r.Pos()
	for _, v := range r.Values {
		unit, value := origUnit(v), v.Value
		if v.OrigUnit != "" {
			value = v.OrigValue // as written: -5 ns/op, not -5e-09 sec/op
		}
		switch {
		case math.IsNaN(v.Value) || math.IsInf(v.Value, 0):
			return fmt.Errorf("%s:%d: Benchmark%s: %v %s is not a finite number: the job that wrote it failed; rerun it or remove the line", file, line, r.Name, v.Value, unit)
		case v.Value < 0 && KnownUnit(unit):
			return fmt.Errorf("%s:%d: Benchmark%s: %v %s is negative, which no metric here can be; rerun the job or remove the line", file, line, r.Name, value, unit)
		}
	}
	return nil
}

// knownList names the units a results file may carry, for error messages.
func knownList() string {
	var names []string
	for _, u := range Units() {
		names = append(names, u.Unit)
	}
	return strings.Join(append(names, "fs-*-B/op", "ns/op", "B/op", "allocs/op"), ", ")
}

// Write writes results as benchfmt: the unit lines, then every result with its
// config.
func Write(w io.Writer, results []*benchfmt.Result, units benchfmt.UnitMetadataMap) error {
	bw := benchfmt.NewWriter(w)
	keys := slices.SortedFunc(maps.Keys(units), func(a, b benchfmt.UnitMetadataKey) int {
		return cmp.Or(strings.Compare(a.Unit, b.Unit), strings.Compare(a.Key, b.Key))
	})
	for _, k := range keys {
		if err := bw.Write(units[k]); err != nil {
			return err
		}
	}
	for _, r := range results {
		if err := bw.Write(r); err != nil {
			return err
		}
	}
	return nil
}

// Encode is Write into memory.
func Encode(results []*benchfmt.Result, units benchfmt.UnitMetadataMap) ([]byte, error) {
	var buf bytes.Buffer
	err := Write(&buf, results, units)
	return buf.Bytes(), err
}

// Merge combines results files (of shards, say) into one benchfmt text: the union
// of unit lines, then every result with its config.
func Merge(paths ...string) ([]byte, error) {
	results, units, err := ReadFiles(paths...)
	if err != nil {
		return nil, err
	}
	return Encode(results, units)
}
