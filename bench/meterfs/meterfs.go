// Package meterfs wraps a Pebble vfs.FS to count bytes written and syncs per write
// category, optionally throttling writes and syncs to simulate a slower disk, or
// uploading sstables to simulate an object store.
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
	// Object store: sstables uploaded (flushed or compacted), as PUT requests (one
	// per part) and bytes.
	Uploads, UploadBytes int64
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
	s.Uploads -= o.Uploads
	s.UploadBytes -= o.UploadBytes
	return s
}

// FS counts writes through it. Create one with Wrap.
type FS struct {
	vfs.FS
	bytes    [numCategories]atomic.Int64
	syncs    [numCategories]atomic.Int64
	throttle *Throttle

	uploads, uploadBytes atomic.Int64
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
	s.Uploads, s.UploadBytes = fs.uploads.Load(), fs.uploadBytes.Load()
	return s
}

func (fs *FS) wrap(f vfs.File, err error, c vfs.DiskWriteCategory) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	cat := categoryOf(c)
	upload := fs.throttle.ObjectStore() && (cat == Flush || cat == Compaction)
	return &file{File: f, fs: fs, cat: cat, upload: upload}, nil
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
	upload        bool         // an sstable, uploaded when closed
	written       atomic.Int64 // bytes written to this file

	// The ranges Pebble recently asked to read ahead (one per reading iterator,
	// and a merged scan has one per vnode on the same file): reads inside them
	// cost no operation of their own, as the kernel's read-ahead serves them on a
	// real disk.
	aheadMu sync.Mutex
	ahead   [aheadRanges][2]int64
	aheadN  int
}

// aheadRanges is how many read-ahead ranges a file remembers, the newest replacing
// the oldest: enough for a merged scan's iterators over one sstable.
const aheadRanges = 256

// wrote accounts n bytes written at off (-1: where the last write ended).
func (f *file) wrote(off int64, n int) {
	f.fs.bytes[f.cat].Add(int64(n))
	f.written.Add(int64(n))
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
		ops := 0
		if !f.readAhead(off, n) {
			ops = f.reads.ops(off, n)
		}
		t.transfer(t.read, n, ops)
	}
}

// readAhead reports whether [off, off+n) lies in a range read ahead.
func (f *file) readAhead(off int64, n int) bool {
	if off < 0 {
		return false
	}
	f.aheadMu.Lock()
	defer f.aheadMu.Unlock()
	for _, r := range f.ahead[:min(f.aheadN, aheadRanges)] {
		if off >= r[0] && off+int64(n) <= r[1] {
			return true
		}
	}
	return false
}

// Prefetch is Pebble's read-ahead of an sstable it reads in order: the range is
// read in operations of up to IOSize now, and reads inside it cost none later.
func (f *file) Prefetch(offset, length int64) error {
	if t := f.fs.throttle; t != nil && length > 0 {
		f.aheadMu.Lock()
		f.ahead[f.aheadN%aheadRanges] = [2]int64{offset, offset + length}
		f.aheadN++
		f.aheadMu.Unlock()
		if d := t.ops.reserve(float64(opsOf(int(length)))); d > 0 {
			t.clock.Sleep(d)
		}
	}
	return f.File.Prefetch(offset, length)
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

// Close closes the file and, for an object store's sstable, uploads it: Pebble
// closes an sstable once it is written and synced, before the flush or compaction
// that made it is done, as the engine's uploader finishes before its checkpoint.
func (f *file) Close() error {
	err := f.File.Close()
	if n := f.written.Load(); f.upload && n > 0 && err == nil {
		f.fs.uploads.Add(int64(f.fs.throttle.Upload(n)))
		f.fs.uploadBytes.Add(n)
	}
	return err
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
// and adds a latency to every sync, like a network-attached volume; or uploads
// sstables, like an object store.
type Throttle struct {
	write, read, ops *bucket // nil: unlimited
	sync             *sampler
	upload           *Upload // nil: no object store
	put              *sampler
	uploadBW         *bucket
	clock            Clock

	syncMu    sync.Mutex
	overslept time.Duration // sleep beyond the drawn latencies not yet made up for
}

// ThrottleConfig is what a Throttle limits; a zero rate is unlimited.
type ThrottleConfig struct {
	WriteBandwidth int64         // bytes/s
	ReadBandwidth  int64         // bytes/s, a bucket of its own
	Bandwidth      int64         // bytes/s that reads and writes share, as a volume's; instead of the two above
	IOPS           int64         // read and write operations/s; a file's contiguous transfers merge into operations of up to IOSize
	Burst          time.Duration // how much of each rate a bucket holds (0: 100ms)
	Sync           Latency
	Upload         *Upload // nil: not an object store
	Clock          Clock   // nil: real time
}

// Upload is an object store's: sealed sstables are uploaded, each as one PUT request
// per PartSize (parts in parallel, as a multipart upload sends them), taking the
// slowest part's request latency plus the bytes at the bandwidth, which concurrent
// uploads share. There is no WAL: data is durable once uploaded.
type Upload struct {
	Latency   Latency // of one PUT request
	Bandwidth int64   // bytes/s; 0: unlimited
}

// PartSize is the size of a multipart upload's parts; smaller files go in one
// request.
const PartSize = 16 << 20

// IOSize is the largest transfer counted as one operation, as cloud volumes count
// IOPS (gp3 counts I/O of up to 256 KiB as one).
const IOSize = 256 << 10

// Latency is the time a sync or a request takes: log-normal with the given median
// and 99th percentile, the shape of a network volume's or an object store's tail;
// constant when P99 ≤ Median.
type Latency struct {
	Median, P99 time.Duration
	Seed        uint64 // draws the latencies: the same seed, the same sequence
}

// z99 is the standard normal's 99th percentile.
const z99 = 2.3263478740408408

// sampler draws latencies from one distribution; nil draws none.
type sampler struct {
	median time.Duration
	sigma  float64 // of the log-normal; 0: every draw is the median
	mu     sync.Mutex
	rng    *rand.Rand
}

// newSampler returns a sampler of l, its draws a stream of their own; nil when the
// median is 0.
func newSampler(l Latency, stream uint64) *sampler {
	if l.Median <= 0 {
		return nil
	}
	s := &sampler{median: l.Median, rng: rand.New(rand.NewPCG(l.Seed, stream))}
	if l.P99 > l.Median {
		s.sigma = math.Log(float64(l.P99)/float64(l.Median)) / z99
	}
	return s
}

func (s *sampler) draw() time.Duration {
	if s == nil {
		return 0
	}
	if s.sigma == 0 {
		return s.median
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Duration(float64(s.median) * math.Exp(s.sigma*s.rng.NormFloat64()))
}

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
		ops: newBucket(cfg.IOPS, burst, clock), sync: newSampler(cfg.Sync, 0x73796e63), clock: clock,
	}
	if cfg.Bandwidth > 0 {
		t.write = newBucket(cfg.Bandwidth, burst, clock)
		t.read = t.write
	}
	if u := cfg.Upload; u != nil {
		t.upload, t.put, t.uploadBW = u, newSampler(u.Latency, 0x707574), newBucket(u.Bandwidth, burst, clock)
	}
	return t
}

// ObjectStore reports whether t uploads sstables (nil: no).
func (t *Throttle) ObjectStore() bool { return t != nil && t.upload != nil }

// Upload uploads a file of n bytes to the object store and returns the requests it
// took.
func (t *Throttle) Upload(n int64) int {
	requests := int((n + PartSize - 1) / PartSize)
	var latency time.Duration
	for range requests {
		latency = max(latency, t.put.draw())
	}
	if d := latency + t.uploadBW.reserve(float64(n)); d > 0 {
		t.clock.Sleep(d)
	}
	return requests
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
	if t.sync == nil {
		return
	}
	latency := t.sync.draw()
	t.syncMu.Lock()
	d := max(latency-t.overslept, 0)
	t.syncMu.Unlock()
	start := t.clock.Now()
	t.clock.Sleep(d)
	over := t.clock.Now().Sub(start) - d
	t.syncMu.Lock()
	t.overslept = min(max(t.overslept+over-(latency-d), 0), latency)
	t.syncMu.Unlock()
}
