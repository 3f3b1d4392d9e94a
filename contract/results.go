package contract

import (
	"bytes"
	"cmp"
	"io"
	"maps"
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

// ReadFiles reads results files; each result keeps its file name as its .file
// config, as benchstat's columns do. A line benchfmt cannot parse is an error.
func ReadFiles(names ...string) ([]*benchfmt.Result, benchfmt.UnitMetadataMap, error) {
	files := benchfmt.Files{Paths: names}
	var results []*benchfmt.Result
	for files.Scan() {
		switch rec := files.Result().(type) {
		case *benchfmt.Result:
			results = append(results, rec.Clone())
		case *benchfmt.SyntaxError:
			return nil, nil, rec
		}
	}
	if err := files.Err(); err != nil {
		return nil, nil, err
	}
	return results, files.Units(), nil
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
