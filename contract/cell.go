package contract

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/contract/rates"
)

// BenchmarkName is the base name of the backfill benchmark; its sub-benchmarks are
// the cells.
const BenchmarkName = "Backfill"

// Cell is one benchmark configuration. Its Name is the sub-benchmark name, the
// contract that lets results of any two commits be compared.
type Cell struct {
	Profile  string
	Workload string
	Rows     int64
	Persist  bool
	Scan     string // "merged" or "per-vnode"
	Barrier  rates.Cadence
	Changes  rates.ChangeRate // left out of the name when the default
	Limit    rates.RateLimit  // left out of the name when none
	Read     string           // read mode; "" or the default (left out of the name) is Reads[0]
	Ckpt     int              // checkpoint frequency: every n-th barrier syncs; 0 or 1 (left out of the name) is every one
	Vnodes   int              // vnode count; 0 or DefaultVnodes (left out of the name) is DefaultVnodes
	Chunk    int              // snapshot chunk size in rows; 0 or DefaultChunk (left out of the name) is DefaultChunk
	Par      int
}

// ReadMode is the read mode, Reads[0] for the zero value.
func (c Cell) ReadMode() string {
	if c.Read == "" {
		return Reads[0]
	}
	return c.Read
}

// VnodeCount is the vnode count, DefaultVnodes for the zero value.
func (c Cell) VnodeCount() int {
	if c.Vnodes == 0 {
		return DefaultVnodes
	}
	return c.Vnodes
}

// ChunkSize is the snapshot chunk size, DefaultChunk for the zero value.
func (c Cell) ChunkSize() int {
	if c.Chunk == 0 {
		return DefaultChunk
	}
	return c.Chunk
}

// Checkpoint is the checkpoint frequency, 1 for the zero value.
func (c Cell) Checkpoint() int { return max(c.Ckpt, 1) }

// AtDefault reports whether dimension dim is an optional one at its default: left
// out of the cell's name and of the bench binary's arguments.
func (c Cell) AtDefault(dim string) bool {
	switch dim {
	case "changes":
		return c.Changes.Default()
	case "limit":
		return c.Limit == rates.RateLimit{}
	case "read":
		return c.ReadMode() == Reads[0]
	case "ckpt":
		return c.Checkpoint() == 1
	case "vnodes":
		return c.VnodeCount() == DefaultVnodes
	case "chunk":
		return c.ChunkSize() == DefaultChunk
	}
	return false
}

// OnOff renders a bool as the on|off used in names.
func OnOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// Name returns "profile=…/workload=…/rows=…/persist=…/scan=…/barrier=…/par=…",
// with changes=…, limit=…, read=…, ckpt=…, vnodes=… and chunk=… before par when they are not the defaults (so
// names of cells that existed before these dimensions did stay the same).
func (c Cell) Name() string { return c.name("") }

// RecoveryName is BenchmarkRecovery's sub-benchmark name for the cell with its
// power cut at crash (like "25%"): the cell's Name with crash=… after rows=, so it
// carries every dimension the cell's name does and, at the defaults, stays the
// name recoveries had before the optional dimensions.
func (c Cell) RecoveryName(crash string) string { return c.name("/crash=" + crash) }

// name is Name with afterRows put after rows=….
func (c Cell) name(afterRows string) string {
	extra := ""
	if !c.AtDefault("changes") {
		extra += "/changes=" + c.Changes.String()
	}
	if !c.AtDefault("limit") {
		extra += "/limit=" + c.Limit.String()
	}
	if !c.AtDefault("read") {
		extra += "/read=" + c.Read
	}
	if !c.AtDefault("ckpt") {
		extra += "/ckpt=" + strconv.Itoa(c.Ckpt)
	}
	if !c.AtDefault("vnodes") {
		extra += "/vnodes=" + strconv.Itoa(c.Vnodes)
	}
	if !c.AtDefault("chunk") {
		extra += "/chunk=" + strconv.Itoa(c.Chunk)
	}
	return fmt.Sprintf("profile=%s/workload=%s/rows=%d%s/persist=%s/scan=%s/barrier=%s%s/par=%d",
		c.Profile, c.Workload, c.Rows, afterRows, OnOff(c.Persist), c.Scan, c.Barrier, extra, c.Par)
}

// FullName is the cell's benchmark name without the GOMAXPROCS suffix:
// "Backfill/profile=…/par=2".
func (c Cell) FullName() string { return BenchmarkName + "/" + c.Name() }

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
			c.Barrier, err = rates.ParseCadence(v)
		case "changes":
			c.Changes, err = rates.ParseChangeRate(v)
		case "limit":
			c.Limit, err = rates.ParseRateLimit(v)
		case "read":
			c.Read = v
			if !slices.Contains(Reads, v) {
				err = fmt.Errorf("read %q: want one of %s", v, strings.Join(Reads, ", "))
			}
		case "vnodes":
			if c.Vnodes, err = strconv.Atoi(v); err == nil && (c.Vnodes < 1 || c.Vnodes > MaxVnodes) {
				err = fmt.Errorf("vnodes %q: want a vnode count from 1 to %d", v, MaxVnodes)
			}
		case "chunk":
			if c.Chunk, err = strconv.Atoi(v); err == nil && (c.Chunk < 2 || c.Chunk > MaxChunk) {
				err = fmt.Errorf("chunk %q: want a chunk size from 2 to %d rows", v, MaxChunk)
			}
		case "ckpt":
			if c.Ckpt, err = strconv.Atoi(v); err == nil && c.Ckpt < 1 {
				err = fmt.Errorf("ckpt %q: want a checkpoint frequency ≥ 1", v)
			}
		case "persist":
			if v != "on" && v != "off" {
				err = fmt.Errorf("want on or off")
			}
			c.Persist = v == "on"
		default:
			return c, fmt.Errorf("cell name %q: unknown key %s", name, k)
		}
		if err != nil {
			return c, fmt.Errorf("cell name %q: %w", name, err)
		}
	}
	for _, k := range Dimensions {
		if !seen[k] && !optional[k] {
			return c, fmt.Errorf("cell name %q: missing %s=", name, k)
		}
	}
	c.Ckpt, c.Read, c.Vnodes, c.Chunk = c.Checkpoint(), c.ReadMode(), c.VnodeCount(), c.ChunkSize() // as Matrix.Cells makes them when left out
	return c, nil
}

// CellOf returns the cell of a BenchmarkBackfill result.
func CellOf(r *benchfmt.Result) (Cell, bool) {
	base, parts := r.Name.Parts()
	if string(base) != BenchmarkName {
		return Cell{}, false
	}
	var name []string
	for _, p := range parts {
		if s := string(p); strings.HasPrefix(s, "/") {
			name = append(name, s[1:])
		}
	}
	c, err := ParseName(strings.Join(name, "/"))
	return c, err == nil
}

// Label is how tables and plots show a benchmark's full name: without the
// "Backfill/" prefix and without the GOMAXPROCS suffix, which the profile (in the
// name) and the gomaxprocs config line already say.
func Label(fullName string) string {
	base, parts := benchfmt.Name(fullName).Parts()
	var b strings.Builder
	if string(base) != BenchmarkName {
		b.Write(base)
	}
	for _, p := range parts {
		if p[0] == '-' {
			continue // the GOMAXPROCS suffix
		}
		b.Write(p)
	}
	return strings.TrimPrefix(b.String(), "/")
}
