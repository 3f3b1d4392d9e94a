// Package bench names the backfill benchmark cells and turns a job's result into the
// benchfmt metrics they report; the benchmarks themselves are in its tests.
package bench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/bench/meterfs"
	"github.com/backfill-bench/backfill-bench/bench/pipeline"
)

// Cell is one benchmark configuration. Its Name is the sub-benchmark name, the
// contract that lets results of any two commits be compared (DESIGN §5).
type Cell struct {
	Profile  string
	Workload string
	Rows     int64
	Persist  bool
	Scan     string // "merged" or "per-vnode"
	Barrier  time.Duration
	Par      int
}

// OnOff renders a bool as the on|off used in names.
func OnOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// Name returns "profile=…/workload=…/rows=…/persist=…/scan=…/barrier=…/par=…".
func (c Cell) Name() string {
	return fmt.Sprintf("profile=%s/workload=%s/rows=%d/persist=%s/scan=%s/barrier=%s/par=%d",
		c.Profile, c.Workload, c.Rows, OnOff(c.Persist), c.Scan, FormatDuration(c.Barrier), c.Par)
}

// FormatDuration renders a duration without trailing zero units: 100ms, 1s, 1m30s.
func FormatDuration(d time.Duration) string {
	s := d.String()
	for _, z := range []string{"m0s", "h0m"} {
		if strings.HasSuffix(s, z) {
			s = strings.TrimSuffix(s, z[1:])
		}
	}
	return s
}

// ParseName parses a Name back into a Cell.
func ParseName(name string) (Cell, error) {
	var c Cell
	seen := map[string]bool{}
	for _, part := range strings.Split(name, "/") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return c, fmt.Errorf("cell name %q: %q is not key=value", name, part)
		}
		if seen[k] {
			return c, fmt.Errorf("cell name %q: key %s repeated", name, k)
		}
		seen[k] = true
		var err error
		switch k {
		case "profile":
			c.Profile = v
		case "workload":
			c.Workload = v
		case "scan":
			c.Scan = v
		case "rows":
			c.Rows, err = strconv.ParseInt(v, 10, 64)
		case "par":
			c.Par, err = strconv.Atoi(v)
		case "barrier":
			c.Barrier, err = time.ParseDuration(v)
		case "persist":
			if v != "on" && v != "off" {
				err = fmt.Errorf("want on or off")
			}
			c.Persist = v == "on"
		default:
			return c, fmt.Errorf("cell name %q: unknown key %s", name, k)
		}
		if err != nil {
			return c, fmt.Errorf("cell name %q: %s=%s: %v", name, k, v, err)
		}
	}
	for _, k := range []string{"profile", "workload", "rows", "persist", "scan", "barrier", "par"} {
		if !seen[k] {
			return c, fmt.Errorf("cell name %q: missing %s=", name, k)
		}
	}
	return c, nil
}

// Metric is one reported value.
type Metric struct {
	Value float64
	Unit  string
}

// Unit names, each with its better direction in Units.
const (
	UnitNsPerOp      = "ns/op"
	UnitRowsPerSec   = "rows/s"
	UnitBarrierP50   = "barrier-p50-sec"
	UnitBarrierP99   = "barrier-p99-sec"
	UnitBarrierMax   = "barrier-max-sec"
	UnitWriteAmp     = "write-amp"
	UnitStatePerMV   = "state/mv-bytes"
	UnitCPUPerRow    = "cpu-sec/row"
	UnitLogicalPerOp = "logical-B/op"
	UnitRecoverySec  = "recovery-sec" // reopen → first barrier committed
	UnitRereadRows   = "reread-rows"  // snapshot rows read again after a crash
)

// fsUnit is the unit of physical bytes written in one category.
func fsUnit(c meterfs.Category) string { return "fs-" + c.String() + "-B/op" }

// Units lists every unit the benchmarks report with whether higher is better.
func Units() []benchfmt.UnitMetadata {
	m := func(unit, better string) benchfmt.UnitMetadata {
		return benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: unit, Key: "better"}, OrigUnit: unit, Value: better}
	}
	u := []benchfmt.UnitMetadata{
		m(UnitRowsPerSec, "higher"),
		m(UnitBarrierP50, "lower"),
		m(UnitBarrierP99, "lower"),
		m(UnitBarrierMax, "lower"),
		m(UnitWriteAmp, "lower"),
		m(UnitStatePerMV, "lower"),
		m(UnitCPUPerRow, "lower"),
		m(UnitLogicalPerOp, "lower"),
		m(UnitRecoverySec, "lower"),
		m(UnitRereadRows, "lower"),
	}
	for _, c := range meterfs.Categories() {
		u = append(u, m(fsUnit(c), "lower"))
	}
	return u
}

// WriteUnits writes the Unit metadata lines, so that tools reading the results know
// each metric's direction.
func WriteUnits(w io.Writer) error {
	bw := benchfmt.NewWriter(w)
	for _, u := range Units() {
		if err := bw.Write(&u); err != nil {
			return err
		}
	}
	return nil
}

// Metrics returns what a backfill job reports. ns/op is the job's wall time from the
// first epoch to the final commit, replacing the testing package's own timing.
func Metrics(r *pipeline.Result) []Metric {
	out := []Metric{
		{float64(r.Wall.Nanoseconds()), UnitNsPerOp},
		{r.RowsPerSec(), UnitRowsPerSec},
		{r.BarrierLatency(0.50).Seconds(), UnitBarrierP50},
		{r.BarrierLatency(0.99).Seconds(), UnitBarrierP99},
		{r.BarrierLatency(1).Seconds(), UnitBarrierMax},
		{r.WriteAmp(), UnitWriteAmp},
		{ratio(r.Logical.State, r.Logical.MV), UnitStatePerMV},
		{ratio(int64(r.CPU), r.Rows()) / 1e9, UnitCPUPerRow},
		{float64(r.Logical.Total()), UnitLogicalPerOp},
	}
	for _, c := range meterfs.Categories() {
		out = append(out, Metric{float64(r.FS.Bytes[c]), fsUnit(c)})
	}
	return out
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
