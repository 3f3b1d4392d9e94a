// Package meterfs wraps a Pebble vfs.FS to count bytes written and syncs per write
// category, optionally throttling writes and syncs to simulate a slower disk.
package meterfs

import (
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Category is a physical-write cause, derived from Pebble's vfs.DiskWriteCategory.
type Category int

// The categories reported. Other collects everything Pebble does not label as one of
// the four (OPTIONS files, markers, blob rewrites, unlabelled files).
const (
	WAL Category = iota
	Flush
	Compaction
	Manifest
	Other
	numCategories
)

var categoryNames = [numCategories]string{"wal", "flush", "compaction", "manifest", "other"}

func (c Category) String() string { return categoryNames[c] }

// Categories lists every category in report order.
func Categories() []Category { return []Category{WAL, Flush, Compaction, Manifest, Other} }

func categoryOf(c vfs.DiskWriteCategory) Category {
	switch {
	case c == "pebble-wal":
		return WAL
	case c == "pebble-memtable-flush":
		return Flush
	case c == "pebble-compaction":
		return Compaction
	case c == "pebble-manifest":
		return Manifest
	case strings.Contains(string(c), "wal"):
		return WAL
	}
	return Other
}

// Stats is a snapshot of the counters.
type Stats struct {
	Bytes [numCategories]int64 // bytes written, per category
	Syncs [numCategories]int64 // Sync/SyncData/full SyncTo calls, per category
}

// TotalBytes is the sum of bytes written over all categories.
func (s Stats) TotalBytes() int64 {
	var t int64
	for _, b := range s.Bytes {
		t += b
	}
	return t
}

// Sub returns s - o, the counts between two snapshots.
func (s Stats) Sub(o Stats) Stats {
	for i := range s.Bytes {
		s.Bytes[i] -= o.Bytes[i]
		s.Syncs[i] -= o.Syncs[i]
	}
	return s
}

// FS counts writes through it. Create one with Wrap.
type FS struct {
	vfs.FS
	bytes    [numCategories]atomic.Int64
	syncs    [numCategories]atomic.Int64
	throttle *Throttle
}

// Wrap returns fs counting writes, throttled by t when t is not nil.
func Wrap(fs vfs.FS, t *Throttle) *FS { return &FS{FS: fs, throttle: t} }

// Stats returns the counters so far.
func (fs *FS) Stats() Stats {
	var s Stats
	for i := range s.Bytes {
		s.Bytes[i] = fs.bytes[i].Load()
		s.Syncs[i] = fs.syncs[i].Load()
	}
	return s
}

func (fs *FS) wrap(f vfs.File, err error, c vfs.DiskWriteCategory) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &file{File: f, fs: fs, cat: categoryOf(c)}, nil
}

// Open implements vfs.FS: reads of every file go through the throttle.
func (fs *FS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.Open(name, opts...)
	if fs.throttle == nil { // nothing to count: no indirection on the read path
		return f, err
	}
	return fs.wrap(f, err, vfs.WriteCategoryUnspecified)
}

// Create implements vfs.FS.
func (fs *FS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	return fs.wrap(f, err, c)
}

// OpenReadWrite implements vfs.FS.
func (fs *FS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, c, opts...)
	return fs.wrap(f, err, c)
}

// ReuseForWrite implements vfs.FS.
func (fs *FS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, c)
	return fs.wrap(f, err, c)
}

type file struct {
	vfs.File
	fs            *FS
	cat           Category
	reads, writes ioRun
}

// wrote accounts n bytes written at off (-1: where the last write ended).
func (f *file) wrote(off int64, n int) {
	f.fs.bytes[f.cat].Add(int64(n))
	if t := f.fs.throttle; t != nil {
		t.transfer(t.write, n, f.writes.ops(off, n))
	}
}

func (f *file) synced() {
	f.fs.syncs[f.cat].Add(1)
	if f.fs.throttle != nil {
		f.writes.close()
		f.fs.throttle.Sync()
	}
}

// readBytes accounts n bytes read at off (-1: where the last read ended).
func (f *file) readBytes(off int64, n int) {
	if t := f.fs.throttle; t != nil {
		t.transfer(t.read, n, f.reads.ops(off, n))
	}
}

func (f *file) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.readBytes(-1, n)
	return n, err
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.readBytes(off, n)
	return n, err
}

func (f *file) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.wrote(-1, n)
	return n, err
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	f.wrote(off, n)
	return n, err
}

func (f *file) Sync() error {
	err := f.File.Sync()
	f.synced()
	return err
}

func (f *file) SyncData() error {
	err := f.File.SyncData()
	f.synced()
	return err
}

func (f *file) SyncTo(length int64) (bool, error) {
	full, err := f.File.SyncTo(length)
	if full {
		f.synced()
	}
	return full, err
}

// Clock is the time source of a Throttle; tests use a fake one.
type Clock interface {
	Now() time.Time
	Sleep(time.Duration)
}

type realClock struct{}

func (realClock) Now() time.Time        { return time.Now() }
func (realClock) Sleep(d time.Duration) { time.Sleep(d) }

// Throttle limits read and write bandwidth and I/O operations with token buckets
// and adds a latency to every sync, like a network-attached volume.
type Throttle struct {
	write, read, ops *bucket // nil: unlimited
	sync             SyncLatency
	syncSigma        float64 // of the log-normal sync latency; 0: every sync takes the median
	clock            Clock

	syncMu    sync.Mutex
	syncRNG   *rand.Rand
	overslept time.Duration // sleep beyond the drawn latencies not yet made up for
}

// ThrottleConfig is what a Throttle limits; a zero rate is unlimited.
type ThrottleConfig struct {
	WriteBandwidth int64         // bytes/s
	ReadBandwidth  int64         // bytes/s, a bucket of its own
	IOPS           int64         // read and write operations/s; a file's contiguous transfers merge into operations of up to IOSize
	Burst          time.Duration // how much of each rate a bucket holds (0: 100ms)
	Sync           SyncLatency
	Clock          Clock // nil: real time
}

// IOSize is the largest transfer counted as one operation, as cloud volumes count
// IOPS (gp3 counts I/O of up to 256 KiB as one).
const IOSize = 256 << 10

// SyncLatency is the time a sync takes: log-normal with the given median and 99th
// percentile, the shape of a network volume's tail; constant when P99 ≤ Median.
type SyncLatency struct {
	Median, P99 time.Duration
	Seed        uint64 // draws the latencies: the same seed, the same sequence
}

// z99 is the standard normal's 99th percentile.
const z99 = 2.3263478740408408

// NewThrottle returns a throttle of cfg.
func NewThrottle(cfg ThrottleConfig) *Throttle {
	clock := cfg.Clock
	if clock == nil {
		clock = realClock{}
	}
	burst := cfg.Burst
	if burst <= 0 {
		burst = 100 * time.Millisecond
	}
	t := &Throttle{
		write: newBucket(cfg.WriteBandwidth, burst, clock), read: newBucket(cfg.ReadBandwidth, burst, clock),
		ops: newBucket(cfg.IOPS, burst, clock), sync: cfg.Sync, clock: clock,
		syncRNG: rand.New(rand.NewPCG(cfg.Sync.Seed, 0x73796e63)),
	}
	if cfg.Sync.Median > 0 && cfg.Sync.P99 > cfg.Sync.Median {
		t.syncSigma = math.Log(float64(cfg.Sync.P99)/float64(cfg.Sync.Median)) / z99
	}
	return t
}

// bucket is a token bucket of perSec tokens a second holding burst's worth.
type bucket struct {
	perSec, burst float64
	clock         Clock
	mu            chan struct{} // a one-slot lock, so waiting callers queue in order
	tokens        float64
	last          time.Time
}

func newBucket(perSec int64, burst time.Duration, clock Clock) *bucket {
	if perSec <= 0 {
		return nil
	}
	b := &bucket{perSec: float64(perSec), burst: float64(perSec) * burst.Seconds(), clock: clock, mu: make(chan struct{}, 1), last: clock.Now()}
	b.tokens = b.burst
	return b
}

// reserve takes n tokens and returns how long the caller must wait for them. Debt
// carries over, so the sustained rate converges to perSec. A nil bucket is unlimited.
func (b *bucket) reserve(n float64) time.Duration {
	if b == nil {
		return 0
	}
	b.mu <- struct{}{}
	defer func() { <-b.mu }()
	now := b.clock.Now()
	b.tokens = min(b.tokens+now.Sub(b.last).Seconds()*b.perSec, b.burst)
	b.last = now
	b.tokens -= n
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens / b.perSec * float64(time.Second))
}

// transfer accounts n bytes through bw and ops operations, sleeping as the
// tighter limit requires.
func (t *Throttle) transfer(bw *bucket, n, ops int) {
	if n <= 0 {
		return
	}
	if d := max(bw.reserve(float64(n)), t.ops.reserve(float64(ops))); d > 0 {
		t.clock.Sleep(d)
	}
}

// Write accounts n written bytes, as operations of their own.
func (t *Throttle) Write(n int) { t.transfer(t.write, n, opsOf(n)) }

// Read accounts n read bytes, as operations of their own.
func (t *Throttle) Read(n int) { t.transfer(t.read, n, opsOf(n)) }

func opsOf(n int) int { return (n + IOSize - 1) / IOSize }

// ioRun merges a file's contiguous transfers into operations of up to IOSize, as a
// cloud volume merges physically sequential small I/O (and the kernel's read-ahead
// does for a real disk): a sequential scan of 4 KiB blocks is not 64 operations
// per 256 KiB.
type ioRun struct {
	mu     sync.Mutex
	end    int64 // where the last transfer ended
	filled int   // bytes in the last operation; IOSize: full
}

// close ends the open operation: a sync waits for it, so the next write is another.
func (r *ioRun) close() {
	r.mu.Lock()
	r.filled = 0
	r.mu.Unlock()
}

// ops returns the new operations a transfer of n bytes at off (-1: where the last
// one ended) starts.
func (r *ioRun) ops(off int64, n int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if off < 0 {
		off = r.end
	}
	rest := n
	if off == r.end && r.filled > 0 {
		take := min(rest, IOSize-r.filled)
		r.filled += take
		rest -= take
	}
	ops := opsOf(rest)
	if rest > 0 {
		r.filled = rest - (ops-1)*IOSize
	}
	r.end = off + int64(n)
	return ops
}

// Sync adds a sync latency drawn from the distribution. A sleep overshoots by the
// timer's slack; the overshoot is taken off the next sync's sleep, so that the
// latencies slept match the ones drawn.
func (t *Throttle) Sync() {
	if t.sync.Median <= 0 {
		return
	}
	t.syncMu.Lock()
	latency := t.sync.Median
	if t.syncSigma > 0 {
		latency = time.Duration(float64(latency) * math.Exp(t.syncSigma*t.syncRNG.NormFloat64()))
	}
	d := max(latency-t.overslept, 0)
	t.syncMu.Unlock()
	start := t.clock.Now()
	t.clock.Sleep(d)
	over := t.clock.Now().Sub(start) - d
	t.syncMu.Lock()
	t.overslept = min(max(t.overslept+over-(latency-d), 0), latency)
	t.syncMu.Unlock()
}
