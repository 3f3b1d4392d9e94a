// Package profile defines the hardware profiles a benchmark cell runs on: versioned
// JSON files (the built-in ones embedded) that set the filesystem, its throttle, the
// block cache, the memtable, the LSM's shape and the CPU count.
package profile

import (
	"bytes"
	"cmp"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// Filesystems a profile can run on.
const (
	FSMem  = "mem"  // Pebble's in-memory FS
	FSDisk = "disk" // the OS filesystem, a fresh directory per job
)

// Profile is one hardware profile.
type Profile struct {
	Name           string
	Version        int
	Description    string
	FS             string        // FSMem or FSDisk
	Dir            string        // FSDisk: where job directories are made ("": the temp dir)
	AllowTmpfs     bool          // FSDisk: run even when Dir is on tmpfs (memory, not a disk)
	WriteBandwidth int64         // bytes/s through the throttle; 0: unlimited
	ReadBandwidth  int64         // bytes/s read through the throttle (a bucket of its own); 0: unlimited
	Bandwidth      int64         // bytes/s that reads and writes share (instead of the two above); 0: none
	IOPS           int64         // read and write operations/s, one per started 256 KiB; 0: unlimited
	SyncLatency    time.Duration // the median time the throttle adds to a sync
	SyncLatencyP99 time.Duration // its 99th percentile (log-normal tail); ≤ SyncLatency: constant
	// An object store instead of a disk: no WAL, a checkpoint flushes the memtable
	// and its sstables (and compactions') upload, each PUT request taking
	// PutLatency (median; p99 PutLatencyP99) and the bytes UploadBandwidth.
	ObjectStore     bool
	PutLatency      time.Duration
	PutLatencyP99   time.Duration
	UploadBandwidth int64  // bytes/s; 0: unlimited
	BlockCache      int64  // bytes
	MemTable        int64  // bytes
	CPUs            int    // GOMAXPROCS while a cell runs; 0: all
	Nightly         bool   // part of the nightly matrix
	Source          string // where it was read from: "built-in" or a file path

	// No WAL: every checkpoint flushes the epoch's writes to L0 sstables, as the
	// engine's shared-buffer sync does (an object store is so anyway).
	Checkpointed bool
	LSM          LSM    // Pebble's levels and compactions; zero fields keep its defaults
	Compaction   string // CompactionLocal ("" too), CompactionOffloaded or CompactionSerial
	// The creating job's tables (MV, state) in a compaction group of their own,
	// apart from the upstream table's, as the engine gives each new job's tables.
	CompactionGroups bool
}

// Where compactions run.
const (
	CompactionLocal = "local" // on the job's cores, their CPU counted as the job's
	// Apart from the job, as the engine's compactor nodes run them: their CPU is
	// reported on its own and not as the job's, and the job gets one more P per
	// concurrent compaction than its cpus (or the machine's).
	CompactionOffloaded = "offloaded"
	// Only at checkpoints, after the flush, one at a time and to completion, on
	// the job's cores: what compactions rewrite depends on the data, not on
	// timing, so their bytes repeat from run to run. A checkpointed profile only.
	CompactionSerial = "serial"
)

// LSM shapes Pebble's levels and compactions; a zero field keeps Pebble's default.
type LSM struct {
	L0CompactionThreshold int    // L0 sublevels that make L0 compact
	L0StopWritesThreshold int    // L0 sublevels at which writes stop
	CompactionConcurrency int    // compactions at once
	LBaseMaxBytes         int64  // the base level's size before it compacts down
	TargetFileSize        int64  // sstables written to L0 and the base level; doubling every second level below
	BlockSize             int64  // every level's sstable data blocks
	Compression           string // every level's sstables: one of Compressions
}

// Compressions are the sstable compressions an LSM can name ("" keeps Pebble's
// default, snappy).
var Compressions = []string{"none", "snappy", "zstd", "minlz"}

// lsmFile is LSM's on-disk form.
type lsmFile struct {
	L0CompactionThreshold int    `json:"l0_compaction_threshold,omitempty"`
	L0StopWritesThreshold int    `json:"l0_stop_writes_threshold,omitempty"`
	CompactionConcurrency int    `json:"compaction_concurrency,omitempty"`
	LBaseMaxBytes         string `json:"lbase_max_bytes,omitempty"`
	TargetFileSize        string `json:"target_file_size,omitempty"`
	BlockSize             string `json:"block_size,omitempty"`
	Compression           string `json:"compression,omitempty"`
}

// file is the on-disk form: sizes and durations as text a person writes.
type file struct {
	Name            string `json:"name"`
	Version         int    `json:"version"`
	Description     string `json:"description"`
	FS              string `json:"fs"`
	Dir             string `json:"dir,omitempty"`
	AllowTmpfs      bool   `json:"allow_tmpfs,omitempty"`
	WriteBandwidth  string `json:"write_bandwidth,omitempty"` // per second, e.g. "125MiB"
	ReadBandwidth   string `json:"read_bandwidth,omitempty"`  // per second
	Bandwidth       string `json:"bandwidth,omitempty"`       // per second, reads and writes together
	IOPS            int64  `json:"iops,omitempty"`
	SyncLatency     string `json:"sync_latency,omitempty"`     // median, e.g. "1ms"
	SyncLatencyP99  string `json:"sync_latency_p99,omitempty"` // e.g. "6ms"; default: the median
	ObjectStore     bool   `json:"object_store,omitempty"`
	PutLatency      string `json:"put_latency,omitempty"`      // median, e.g. "80ms"
	PutLatencyP99   string `json:"put_latency_p99,omitempty"`  // default: the median
	UploadBandwidth string `json:"upload_bandwidth,omitempty"` // per second
	BlockCache      string `json:"block_cache,omitempty"`      // default 64MiB
	MemTable        string `json:"memtable,omitempty"`         // default 64MiB
	CPUs            int    `json:"cpus,omitempty"`
	Nightly         bool   `json:"nightly,omitempty"`

	Checkpointed bool    `json:"checkpointed,omitempty"`
	LSM          lsmFile `json:"lsm,omitzero"`
	Compaction   string  `json:"compaction,omitempty"` // "local" (default), "offloaded" or "serial"
	// One Pebble DB per compaction group: the upstream's, the creating job's.
	CompactionGroups bool `json:"compaction_groups,omitempty"`
}

//go:embed profiles/*.json
var builtinFiles embed.FS

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// Parse reads a profile from its JSON form; source names it in errors.
func Parse(r io.Reader, source string) (Profile, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var f file
	if err := dec.Decode(&f); err != nil {
		return Profile{}, fmt.Errorf("profile %s: %w", source, err)
	}
	if dec.More() {
		return Profile{}, fmt.Errorf("profile %s: more than one JSON object", source)
	}
	p := Profile{
		Name: f.Name, Version: f.Version, Description: f.Description, FS: f.FS, Dir: f.Dir, AllowTmpfs: f.AllowTmpfs,
		IOPS: f.IOPS, CPUs: f.CPUs, Nightly: f.Nightly, Source: source, ObjectStore: f.ObjectStore,
		Checkpointed: f.Checkpointed, Compaction: f.Compaction, CompactionGroups: f.CompactionGroups,
		LSM: LSM{L0CompactionThreshold: f.LSM.L0CompactionThreshold, L0StopWritesThreshold: f.LSM.L0StopWritesThreshold, CompactionConcurrency: f.LSM.CompactionConcurrency,
			Compression: f.LSM.Compression},
	}
	bad := func(field, value, why string) (Profile, error) {
		return Profile{}, fmt.Errorf("profile %s: %s %q: %s", source, field, value, why)
	}
	switch {
	case !nameRE.MatchString(f.Name):
		return bad("name", f.Name, "must be lower-case letters, digits and dashes")
	case f.Version < 1:
		return bad("version", strconv.Itoa(f.Version), "must be ≥ 1; raise it whenever a knob changes")
	case f.FS != FSMem && f.FS != FSDisk:
		return bad("fs", f.FS, `must be "mem" or "disk"`)
	case f.Dir != "" && f.FS != FSDisk:
		return bad("dir", f.Dir, `only a "disk" profile has a directory`)
	case f.AllowTmpfs && f.FS != FSDisk:
		return bad("allow_tmpfs", "true", `only a "disk" profile has a directory to check`)
	case f.CPUs < 0:
		return bad("cpus", strconv.Itoa(f.CPUs), "must be ≥ 0 (0: all)")
	case f.IOPS < 0:
		return bad("iops", strconv.FormatInt(f.IOPS, 10), "must be ≥ 0 (0: unlimited)")
	case f.ObjectStore && f.PutLatency == "":
		return bad("put_latency", "", "an object store needs the latency of its PUT requests, like 80ms")
	case !f.ObjectStore && (f.PutLatency != "" || f.PutLatencyP99 != "" || f.UploadBandwidth != ""):
		return bad("object_store", "false", "put_latency, put_latency_p99 and upload_bandwidth describe an object store: set object_store: true")
	case f.ObjectStore && (f.FS != FSMem || f.SyncLatency != "" || f.WriteBandwidth != "" || f.IOPS != 0):
		return bad("object_store", "true", `an object store runs on fs "mem" and has no disk's write_bandwidth, iops or sync_latency`)
	case f.Checkpointed && f.SyncLatency != "":
		return bad("checkpointed", "true", "a checkpointed store has no WAL to sync: leave sync_latency out")
	case p.Compaction != "" && p.Compaction != CompactionLocal && p.Compaction != CompactionOffloaded && p.Compaction != CompactionSerial:
		return bad("compaction", f.Compaction, `must be "local", "offloaded" or "serial"`)
	case f.CompactionGroups && !f.Checkpointed && !f.ObjectStore:
		return bad("compaction_groups", "true", "compaction groups need a store without a WAL: set checkpointed: true")
	case p.Compaction == CompactionSerial && (!f.Checkpointed || f.ObjectStore):
		return bad("compaction", f.Compaction, "serial compactions run at checkpoints: set checkpointed: true (and no object_store)")
	case f.LSM.L0CompactionThreshold < 0 || f.LSM.L0StopWritesThreshold < 0 || f.LSM.CompactionConcurrency < 0:
		return bad("lsm", fmt.Sprintf("%+v", f.LSM), "l0_compaction_threshold, l0_stop_writes_threshold and compaction_concurrency must be ≥ 0 (0: Pebble's default)")
	case f.LSM.L0StopWritesThreshold > 0 && f.LSM.L0StopWritesThreshold < cmp.Or(f.LSM.L0CompactionThreshold, 4):
		return bad("lsm.l0_stop_writes_threshold", strconv.Itoa(f.LSM.L0StopWritesThreshold), "must be at least l0_compaction_threshold (default 4), or writes stop before L0 compacts")
	case f.LSM.Compression != "" && !slices.Contains(Compressions, f.LSM.Compression):
		return bad("lsm.compression", f.LSM.Compression, "must be one of "+strings.Join(Compressions, ", ")+" (leave it out for Pebble's default, snappy)")
	}
	var err error
	if p.WriteBandwidth, err = parseBytes(f.WriteBandwidth, 0); err != nil {
		return bad("write_bandwidth", f.WriteBandwidth, err.Error())
	}
	if p.ReadBandwidth, err = parseBytes(f.ReadBandwidth, 0); err != nil {
		return bad("read_bandwidth", f.ReadBandwidth, err.Error())
	}
	if p.Bandwidth, err = parseBytes(f.Bandwidth, 0); err != nil {
		return bad("bandwidth", f.Bandwidth, err.Error())
	}
	if p.Bandwidth > 0 && (p.WriteBandwidth > 0 || p.ReadBandwidth > 0) {
		return bad("bandwidth", f.Bandwidth, "reads and writes share it: leave write_bandwidth and read_bandwidth out")
	}
	if p.BlockCache, err = parseBytes(f.BlockCache, 64<<20); err != nil {
		return bad("block_cache", f.BlockCache, err.Error())
	}
	if p.MemTable, err = parseBytes(f.MemTable, 64<<20); err != nil {
		return bad("memtable", f.MemTable, err.Error())
	}
	if p.BlockCache == 0 {
		return bad("block_cache", f.BlockCache, "must be > 0")
	}
	if p.MemTable < 1<<20 {
		return bad("memtable", f.MemTable, "must be ≥ 1MiB")
	}
	if p.LSM.LBaseMaxBytes, err = parseBytes(f.LSM.LBaseMaxBytes, 0); err != nil {
		return bad("lsm.lbase_max_bytes", f.LSM.LBaseMaxBytes, err.Error())
	}
	if p.LSM.TargetFileSize, err = parseBytes(f.LSM.TargetFileSize, 0); err != nil {
		return bad("lsm.target_file_size", f.LSM.TargetFileSize, err.Error())
	}
	if p.LSM.BlockSize, err = parseBytes(f.LSM.BlockSize, 0); err != nil {
		return bad("lsm.block_size", f.LSM.BlockSize, err.Error())
	}
	if p.LSM.BlockSize > 1<<30 {
		return bad("lsm.block_size", f.LSM.BlockSize, "must be at most 1GiB (the engine's is 64KiB)")
	}
	if p.UploadBandwidth, err = parseBytes(f.UploadBandwidth, 0); err != nil {
		return bad("upload_bandwidth", f.UploadBandwidth, err.Error())
	}
	if p.SyncLatency, p.SyncLatencyP99, err = parseLatency("sync_latency", f.SyncLatency, f.SyncLatencyP99); err != nil {
		return Profile{}, fmt.Errorf("profile %s: %w", source, err)
	}
	if p.PutLatency, p.PutLatencyP99, err = parseLatency("put_latency", f.PutLatency, f.PutLatencyP99); err != nil {
		return Profile{}, fmt.Errorf("profile %s: %w", source, err)
	}
	return p, nil
}

// parseLatency reads the fields name (a median) and name_p99, which defaults to the
// median and must not be below it.
func parseLatency(name, median, p99 string) (m, q time.Duration, err error) {
	if median != "" {
		if m, err = time.ParseDuration(median); err != nil || m < 0 {
			return 0, 0, fmt.Errorf("%s %q: not a duration ≥ 0 like 1ms", name, median)
		}
	}
	if p99 == "" {
		return m, m, nil
	}
	if q, err = time.ParseDuration(p99); err != nil {
		return 0, 0, fmt.Errorf("%s_p99 %q: not a duration like 6ms", name, p99)
	}
	if m <= 0 || q < m {
		return 0, 0, fmt.Errorf("%s_p99 %q: must be ≥ %s (%q), which must be set", name, p99, name, median)
	}
	return m, q, nil
}

// parseBytes reads "125MiB", "1GiB", "512KiB" or a plain byte count.
func parseBytes(s string, def int64) (int64, error) {
	if s == "" {
		return def, nil
	}
	mult := int64(1)
	num := s
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"B", 1}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			num, mult = n, u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil {
		return 0, errors.New("not a size like 125MiB, 1GiB or 4096")
	}
	if v < 0 {
		return 0, errors.New("must be ≥ 0")
	}
	return int64(v * float64(mult)), nil
}

// Load reads a profile file.
func Load(name string) (Profile, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return Profile{}, fmt.Errorf("profile: %w", err)
	}
	return Parse(bytes.NewReader(data), name)
}

// Builtin returns the embedded profiles sorted by name.
func Builtin() []Profile {
	entries, err := builtinFiles.ReadDir("profiles")
	if err != nil {
		panic(err) // embedded at build time; cannot fail
	}
	var out []Profile
	for _, e := range entries {
		data, err := builtinFiles.ReadFile(path.Join("profiles", e.Name()))
		if err != nil {
			panic(err)
		}
		p, err := Parse(bytes.NewReader(data), "built-in "+e.Name())
		if err != nil {
			panic(err) // a test parses every embedded file
		}
		p.Source = "built-in"
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Set is the built-in profiles plus the ones loaded from files.
type Set struct{ byName map[string]Profile }

// NewSet loads the profile files, which may not reuse a built-in or each other's name.
func NewSet(files []string) (*Set, error) {
	s := &Set{byName: map[string]Profile{}}
	for _, p := range Builtin() {
		s.byName[p.Name] = p
	}
	for _, f := range files {
		p, err := Load(f)
		if err != nil {
			return nil, err
		}
		if prev, ok := s.byName[p.Name]; ok {
			return nil, fmt.Errorf("profile %s: name %q is taken by %s; give it another name", f, p.Name, prev.Source)
		}
		s.byName[p.Name] = p
	}
	return s, nil
}

// Get returns the profile of that name.
func (s *Set) Get(name string) (Profile, error) {
	p, ok := s.byName[name]
	if !ok {
		return Profile{}, fmt.Errorf("unknown profile %q (known: %s; a file of your own goes in --profile-file)", name, strings.Join(s.Names(), ", "))
	}
	return p, nil
}

// All returns every profile sorted by name.
func (s *Set) All() []Profile {
	var out []Profile
	for _, p := range s.byName {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names returns every profile name, sorted.
func (s *Set) Names() []string {
	var out []string
	for _, p := range s.All() {
		out = append(out, p.Name)
	}
	return out
}

// Simulated reports whether the throttle shapes the filesystem, so that results from
// it are a model of a device rather than a measurement of one.
func (p Profile) Simulated() bool {
	return p.WriteBandwidth > 0 || p.ReadBandwidth > 0 || p.Bandwidth > 0 || p.IOPS > 0 || p.SyncLatency > 0 || p.ObjectStore
}

// Disk describes the storage the profile measures, for result files.
func (p Profile) Disk() string {
	base := "in-memory"
	if p.FS == FSDisk {
		base = "real disk"
	}
	if p.Checkpointed && !p.ObjectStore {
		base += ", no WAL: checkpoints flush to L0"
	}
	if !p.Simulated() {
		return base
	}
	if p.ObjectStore {
		put := p.PutLatency.String()
		if p.PutLatencyP99 > p.PutLatency {
			put = fmt.Sprintf("%s (p99 %s)", p.PutLatency, p.PutLatencyP99)
		}
		return fmt.Sprintf("simulated object store, no WAL: %s per PUT, %s/s uploads, on %s", put, FormatBytes(p.UploadBandwidth), base)
	}
	limits := FormatBytes(p.WriteBandwidth) + "/s"
	if p.Bandwidth > 0 {
		limits = FormatBytes(p.Bandwidth) + "/s reads and writes together"
	} else if p.ReadBandwidth > 0 {
		limits = fmt.Sprintf("%s writes %s/s reads", limits, FormatBytes(p.ReadBandwidth))
	}
	if p.IOPS > 0 {
		limits += fmt.Sprintf(" %d IOPS", p.IOPS)
	}
	sync := p.SyncLatency.String()
	if p.SyncLatencyP99 > p.SyncLatency {
		sync = fmt.Sprintf("%s (p99 %s)", p.SyncLatency, p.SyncLatencyP99)
	}
	return fmt.Sprintf("simulated %s %s per sync on %s", limits, sync, base)
}

// FormatBytes renders a byte count in the unit the profile files use.
func FormatBytes(n int64) string {
	switch {
	case n == 0:
		return "unlimited"
	case n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// CPUsString renders the CPU count the profile runs with: a number, or "all".
func (p Profile) CPUsString() string {
	if p.CPUs > 0 {
		return strconv.Itoa(p.CPUs)
	}
	return "all"
}

// Describe lists the profile's knobs on one line, tab-separated.
func (p Profile) Describe() string {
	s := fmt.Sprintf("v%d\t%s\tcache %s\tmemtable %s\tcpus %s", p.Version, p.Disk(),
		FormatBytes(p.BlockCache), FormatBytes(p.MemTable), p.CPUsString())
	if p.Dir != "" {
		s += "\tdir " + p.Dir
	}
	if lsm := p.LSM.String(); lsm != "" {
		s += "\t" + lsm
	}
	if p.Compaction == CompactionOffloaded || p.Compaction == CompactionSerial {
		s += "\tcompaction " + p.Compaction
	}
	if p.CompactionGroups {
		s += "\tcompaction groups"
	}
	return s
}

// String lists the knobs set, "" when every one is Pebble's default.
func (l LSM) String() string {
	var out []string
	for _, k := range []struct {
		name string
		v    int64
		size bool
	}{
		{"l0 compaction at", int64(l.L0CompactionThreshold), false}, {"l0 stop at", int64(l.L0StopWritesThreshold), false},
		{"compactions", int64(l.CompactionConcurrency), false}, {"lbase", l.LBaseMaxBytes, true}, {"files", l.TargetFileSize, true},
		{"blocks", l.BlockSize, true},
	} {
		switch {
		case k.v == 0:
		case k.size:
			out = append(out, k.name+" "+FormatBytes(k.v))
		default:
			out = append(out, k.name+" "+strconv.FormatInt(k.v, 10))
		}
	}
	if l.Compression != "" {
		out = append(out, "compression "+l.Compression)
	}
	return strings.Join(out, ", ")
}

// WriteList writes every profile of the set with every knob and its description.
func (s *Set) WriteList(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tDISK\tCACHE\tMEMTABLE\tCPUS\tLSM\tCOMPACTION\tNIGHTLY\tSOURCE")
	for _, p := range s.All() {
		lsm := p.LSM.String()
		if lsm == "" {
			lsm = "pebble's defaults"
		}
		compaction := p.Compaction
		if compaction == "" {
			compaction = CompactionLocal
		}
		if p.CompactionGroups {
			compaction += "+groups"
		}
		fmt.Fprintf(tw, "%s\tv%d\t%s\t%s\t%s\t%s\t%s\t%s\t%v\t%s\n", p.Name, p.Version, p.Disk(),
			FormatBytes(p.BlockCache), FormatBytes(p.MemTable), p.CPUsString(), lsm, compaction, p.Nightly, p.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, p := range s.All() {
		fmt.Fprintf(w, "%s: %s\n", p.Name, p.Description)
	}
	fmt.Fprintln(w, "\nA profile of your own is a JSON file with these fields (see bench/profile/profiles/);\npass it with --profile-file FILE and name it in --profile.")
	return nil
}

// Filesystem names the filesystem dir is on (tmpfs, ext4, xfs, …), from statfs;
// the magic number in hex for one it does not know.
func Filesystem(dir string) (string, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "", fmt.Errorf("filesystem of %s: %w", dir, err)
	}
	names := map[int64]string{0x01021994: "tmpfs", 0xEF53: "ext4", 0x58465342: "xfs", 0x9123683E: "btrfs",
		0x794C7630: "overlay", 0x6969: "nfs", 0x2FC12FC1: "zfs", 0x65735546: "fuse"}
	if n, ok := names[int64(st.Type)]; ok {
		return n, nil
	}
	return fmt.Sprintf("0x%x", st.Type), nil
}

// JobDir is where a disk profile's jobs make their directories: Dir, or the
// system's temporary directory.
func (p Profile) JobDir() string {
	if p.Dir != "" {
		return p.Dir
	}
	return os.TempDir()
}
