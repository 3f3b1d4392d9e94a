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
	fs  *FS
	cat Category
}

func (f *file) wrote(n int) {
	f.fs.bytes[f.cat].Add(int64(n))
	if f.fs.throttle != nil {
		f.fs.throttle.Write(n)
	}
}

func (f *file) synced() {
	f.fs.syncs[f.cat].Add(1)
	if f.fs.throttle != nil {
		f.fs.throttle.Sync()
	}
}

func (f *file) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.wrote(n)
	return n, err
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	f.wrote(n)
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

// Throttle limits write bandwidth with a token bucket and adds a latency to every
// sync, like a network-attached volume.
type Throttle struct {
	bytesPerSec float64
	burst       float64
	sync        SyncLatency
	syncSigma   float64 // of the log-normal sync latency; 0: every sync takes the median
	clock       Clock

	syncMu    sync.Mutex
	syncRNG   *rand.Rand
	overslept time.Duration // sleep beyond the drawn latencies not yet made up for

	mu     chan struct{} // a one-slot lock, so waiting writers queue in order
	tokens float64
	last   time.Time
}

// SyncLatency is the time a sync takes: log-normal with the given median and 99th
// percentile, the shape of a network volume's tail; constant when P99 ≤ Median.
type SyncLatency struct {
	Median, P99 time.Duration
	Seed        uint64 // draws the latencies: the same seed, the same sequence
}

// z99 is the standard normal's 99th percentile.
const z99 = 2.3263478740408408

// NewThrottle returns a throttle of bytesPerSec (0: unlimited) with a bucket of burst
// bytes (0: 1/10 s worth), adding a sync latency to each sync. clock nil means real time.
func NewThrottle(bytesPerSec, burst int64, sync SyncLatency, clock Clock) *Throttle {
	if clock == nil {
		clock = realClock{}
	}
	if burst <= 0 {
		burst = bytesPerSec / 10
	}
	t := &Throttle{
		bytesPerSec: float64(bytesPerSec), burst: float64(burst), sync: sync,
		clock: clock, mu: make(chan struct{}, 1), last: clock.Now(),
		syncRNG: rand.New(rand.NewPCG(sync.Seed, 0x73796e63)),
	}
	if sync.Median > 0 && sync.P99 > sync.Median {
		t.syncSigma = math.Log(float64(sync.P99)/float64(sync.Median)) / z99
	}
	t.tokens = t.burst
	return t
}

// Reserve takes n bytes from the bucket and returns how long the writer must wait for
// them. Debt carries over, so sustained throughput converges to bytesPerSec.
func (t *Throttle) Reserve(n int) time.Duration {
	if t.bytesPerSec <= 0 {
		return 0
	}
	t.mu <- struct{}{}
	defer func() { <-t.mu }()
	now := t.clock.Now()
	t.tokens += now.Sub(t.last).Seconds() * t.bytesPerSec
	if t.tokens > t.burst {
		t.tokens = t.burst
	}
	t.last = now
	t.tokens -= float64(n)
	if t.tokens >= 0 {
		return 0
	}
	return time.Duration(-t.tokens / t.bytesPerSec * float64(time.Second))
}

// Write accounts n written bytes, sleeping as the bandwidth requires.
func (t *Throttle) Write(n int) {
	if d := t.Reserve(n); d > 0 {
		t.clock.Sleep(d)
	}
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
