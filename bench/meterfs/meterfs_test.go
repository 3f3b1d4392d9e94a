package meterfs

import (
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

type fakeClock struct {
	now       time.Time
	slept     time.Duration
	overshoot time.Duration // added to every sleep, like a real timer's slack
}

func (c *fakeClock) Now() time.Time { return c.now }
func (c *fakeClock) Sleep(d time.Duration) {
	c.slept += d + c.overshoot
	c.now = c.now.Add(d + c.overshoot)
}

func TestThrottleArithmetic(t *testing.T) {
	type io struct {
		read bool
		n    int
		gap  time.Duration // idle time before it
	}
	w := func(n int, gap time.Duration) io { return io{n: n, gap: gap} }
	r := func(n int, gap time.Duration) io { return io{read: true, n: n, gap: gap} }
	half := 500 * time.Millisecond
	tests := []struct {
		name      string
		cfg       ThrottleConfig
		ios       []io
		wantSlept time.Duration
	}{
		{"within burst", ThrottleConfig{WriteBandwidth: 1000, Burst: half}, []io{w(200, 0), w(300, 0)}, 0},
		{"over burst waits for the excess", ThrottleConfig{WriteBandwidth: 1000, Burst: half}, []io{w(500, 0), w(250, 0)}, 250 * time.Millisecond},
		{"idle time refills", ThrottleConfig{WriteBandwidth: 1000, Burst: half}, []io{w(500, 0), w(500, half)}, 0},
		{"refill caps at burst", ThrottleConfig{WriteBandwidth: 1000, Burst: half}, []io{w(500, 0), w(1000, 10*time.Second)}, half},
		{"sustained rate", ThrottleConfig{WriteBandwidth: 1000, Burst: 100 * time.Millisecond}, []io{w(100, 0), w(1000, 0), w(1000, 0), w(1000, 0)}, 3 * time.Second},
		{"unlimited", ThrottleConfig{}, []io{w(1<<30, 0), r(1<<30, 0)}, 0},
		{"reads are not limited by the write bandwidth", ThrottleConfig{WriteBandwidth: 1000, Burst: half}, []io{r(5000, 0)}, 0},
		{"reads have a bucket of their own", ThrottleConfig{WriteBandwidth: 1000, ReadBandwidth: 1000, Burst: half}, []io{w(1000, 0), r(1000, 0)}, 2 * half},
		{"operations bound small transfers", ThrottleConfig{IOPS: 10, Burst: 100 * time.Millisecond}, []io{w(1, 0), r(1, 0), w(1, 0)}, 200 * time.Millisecond},
		{"one operation per started 256KiB", ThrottleConfig{IOPS: 10, Burst: 100 * time.Millisecond}, []io{w(3*IOSize+1, 0)}, 300 * time.Millisecond},
		{"the tighter limit sets the wait", ThrottleConfig{ReadBandwidth: 1 << 30, IOPS: 10, Burst: 100 * time.Millisecond}, []io{r(2*IOSize, 0)}, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &fakeClock{now: time.Unix(0, 0)}
			tt.cfg.Clock = c
			th := NewThrottle(tt.cfg)
			for _, x := range tt.ios {
				c.now = c.now.Add(x.gap)
				if x.read {
					th.Read(x.n)
				} else {
					th.Write(x.n)
				}
			}
			if d := c.slept - tt.wantSlept; d < -time.Microsecond || d > time.Microsecond {
				t.Errorf("slept %v, want %v", c.slept, tt.wantSlept)
			}
		})
	}
}

// TestContiguousTransfersMerge: contiguous transfers share operations of up to
// IOSize; a jump starts a new one.
func TestContiguousTransfersMerge(t *testing.T) {
	const kib = 1 << 10
	type tr struct {
		off int64
		n   int
	}
	seq := func(count, size int) []tr {
		out := make([]tr, count)
		for i := range out {
			out[i] = tr{int64(i * size), size}
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		ts      []tr
		wantOps int
	}{
		{"64 sequential 4KiB reads are one operation", seq(64, 4*kib), 1},
		{"the 65th starts another", seq(65, 4*kib), 2},
		{"jumps do not merge", []tr{{0, 4 * kib}, {1 << 20, 4 * kib}, {8 * kib, 4 * kib}}, 3},
		{"a large transfer counts started operations", []tr{{0, 600 * kib}}, 3},
		{"and the next contiguous one fills its last", []tr{{0, 600 * kib}, {600 * kib, 100 * kib}}, 3},
		{"appends (offset -1) continue the last", []tr{{0, 100 * kib}, {-1, 100 * kib}, {-1, 100 * kib}}, 2},
		{"a sync (n 0 here) ends the open one", []tr{{0, 4 * kib}, {-1, 0}, {-1, 4 * kib}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r ioRun
			ops := 0
			for _, x := range tc.ts {
				if x.n == 0 {
					r.close()
					continue
				}
				ops += r.ops(x.off, x.n)
			}
			if ops != tc.wantOps {
				t.Errorf("%d operations, want %d", ops, tc.wantOps)
			}
		})
	}
}

// TestReadsGoThroughTheThrottle: a file opened for reading is read at the read
// bandwidth.
func TestReadsGoThroughTheThrottle(t *testing.T) {
	c := &fakeClock{now: time.Unix(0, 0)}
	mem := vfs.NewMem()
	f, err := mem.Create("data", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 3000)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fs := Wrap(mem, NewThrottle(ThrottleConfig{ReadBandwidth: 1000, Burst: time.Second, Clock: c}))
	rf, err := fs.Open("data")
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	buf := make([]byte, 1000)
	if _, err := rf.ReadAt(buf, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := rf.Read(append(buf, buf...)); err != nil {
		t.Fatal(err)
	}
	if c.slept != 2*time.Second {
		t.Errorf("reading 3000 bytes at 1000 B/s with a 1s burst slept %v, want 2s", c.slept)
	}
}

// TestSharedBandwidth: with Bandwidth, reads and writes draw on one bucket, as a
// volume's throughput limit covers both: a read after a write waits for the
// write's bytes too.
func TestSharedBandwidth(t *testing.T) {
	c := &fakeClock{now: time.Unix(0, 0)}
	th := NewThrottle(ThrottleConfig{Bandwidth: 1000, Burst: time.Second, Clock: c})
	th.Write(1000) // the burst
	th.Read(1000)  // 1 s more
	if c.slept != time.Second {
		t.Errorf("a 1000-byte write then a 1000-byte read at 1000 B/s shared with a 1 s burst slept %v, want 1s", c.slept)
	}
	c = &fakeClock{now: time.Unix(0, 0)}
	th = NewThrottle(ThrottleConfig{WriteBandwidth: 1000, ReadBandwidth: 1000, Burst: time.Second, Clock: c})
	th.Write(1000)
	th.Read(1000)
	if c.slept != 0 {
		t.Errorf("separate buckets slept %v, want 0", c.slept)
	}
}

func TestThrottleSyncLatency(t *testing.T) {
	c := &fakeClock{now: time.Unix(0, 0)}
	th := NewThrottle(ThrottleConfig{Sync: Latency{Median: 2 * time.Millisecond}, Clock: c})
	th.Sync()
	th.Sync()
	if c.slept != 4*time.Millisecond {
		t.Errorf("slept %v after two syncs, want 4ms", c.slept)
	}
}

// TestThrottleSyncLatencyTail: syncs drawn from a median of 1ms and a p99 of 6ms
// have those percentiles, the same seed draws the same sequence, and without a
// p99 above the median every sync takes the median.
func TestThrottleSyncLatencyTail(t *testing.T) {
	draw := func(sync Latency) []time.Duration {
		c := &fakeClock{now: time.Unix(0, 0)}
		th := NewThrottle(ThrottleConfig{Sync: sync, Clock: c})
		out := make([]time.Duration, 20000)
		for i := range out {
			before := c.slept
			th.Sync()
			out[i] = c.slept - before
		}
		return out
	}
	quantile := func(d []time.Duration, q float64) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[int(q*float64(len(s)-1))]
	}
	tail := Latency{Median: time.Millisecond, P99: 6 * time.Millisecond, Seed: 1}
	got := draw(tail)
	for _, c := range []struct {
		q      float64
		lo, hi time.Duration
	}{{0.5, 950 * time.Microsecond, 1050 * time.Microsecond}, {0.99, 5400 * time.Microsecond, 6600 * time.Microsecond}} {
		if v := quantile(got, c.q); v < c.lo || v > c.hi {
			t.Errorf("p%g of 20000 syncs = %v, want in [%v, %v]", 100*c.q, v, c.lo, c.hi)
		}
	}
	if !slices.Equal(got, draw(tail)) {
		t.Error("the same seed drew different latencies")
	}
	other := tail
	other.Seed = 2
	if slices.Equal(got, draw(other)) {
		t.Error("another seed drew the same latencies")
	}
	for _, d := range draw(Latency{Median: time.Millisecond, P99: time.Millisecond, Seed: 1}) {
		if d != time.Millisecond {
			t.Fatalf("a sync with p99 = median took %v, want 1ms", d)
		}
	}
}

func TestThrottleSyncMakesUpForOversleep(t *testing.T) {
	c := &fakeClock{now: time.Unix(0, 0), overshoot: 300 * time.Microsecond}
	th := NewThrottle(ThrottleConfig{Sync: Latency{Median: time.Millisecond}, Clock: c})
	for range 100 {
		th.Sync()
	}
	// Without compensation 100 syncs would take 130ms; with it, the last one's
	// overshoot at most is left over.
	if c.slept < 100*time.Millisecond || c.slept > 100*time.Millisecond+300*time.Microsecond {
		t.Errorf("100 syncs of 1ms slept %v with a 300µs timer overshoot, want 100ms", c.slept)
	}
}

func TestCountsByCategory(t *testing.T) {
	fs := Wrap(vfs.NewMem(), nil)
	write := func(name string, cat vfs.DiskWriteCategory, n int, sync bool) {
		f, err := fs.Create(name, cat)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(make([]byte, n)); err != nil {
			t.Fatal(err)
		}
		if sync {
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	write("/000001.log", "pebble-wal", 100, true)
	write("/000002.sst", "pebble-memtable-flush", 200, false)
	write("/000003.sst", "pebble-compaction", 300, true)
	write("/MANIFEST-000001", "pebble-manifest", 40, true)
	write("/OPTIONS-000001", vfs.WriteCategoryUnspecified, 5, false)
	s := fs.Stats()
	want := [numCategories]int64{100, 200, 300, 40, 5}
	if s.Bytes != want {
		t.Errorf("bytes = %v, want %v", s.Bytes, want)
	}
	if s.Syncs != [numCategories]int64{1, 0, 1, 1, 0} {
		t.Errorf("syncs = %v", s.Syncs)
	}
	if s.TotalBytes() != 645 {
		t.Errorf("total = %d, want 645", s.TotalBytes())
	}
	if d := fs.Stats().Sub(s); d.TotalBytes() != 0 {
		t.Errorf("Sub of equal snapshots = %v", d)
	}
}

// BenchmarkThrottledWrite writes through the throttle in real time and reports the
// bandwidth achieved as a fraction of the configured one (1 = exact) and the mean
// sync time against the configured latency.
func BenchmarkThrottledWrite(b *testing.B) {
	const (
		rate    = 64 << 20
		latency = time.Millisecond
		chunk   = 64 << 10
		total   = 16 << 20
		syncs   = 20
	)
	fs := Wrap(vfs.NewMem(), NewThrottle(ThrottleConfig{WriteBandwidth: rate, Sync: Latency{Median: latency}}))
	buf := make([]byte, chunk)
	var writeTime, syncTime time.Duration
	for i := 0; i < b.N; i++ {
		f, err := fs.Create("f", vfs.WriteCategoryUnspecified)
		if err != nil {
			b.Fatal(err)
		}
		// Untimed: give the file its size, so that the timed writes overwrite memory
		// rather than allocate it, and drain the bucket, so that every timed byte
		// pays for bandwidth.
		if _, err := f.Write(make([]byte, total)); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		for off := 0; off < total; off += chunk {
			if _, err := f.WriteAt(buf, int64(off)); err != nil {
				b.Fatal(err)
			}
		}
		writeTime += time.Since(start)
		start = time.Now()
		for range syncs {
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
		}
		syncTime += time.Since(start)
		f.Close()
	}
	achieved := float64(total) * float64(b.N) / writeTime.Seconds()
	b.ReportMetric(achieved/rate, "bandwidth/configured")
	b.ReportMetric(float64(syncTime)/float64(b.N*syncs)/float64(latency), "sync/configured")
}

// TestUpload: an object store's sstable (flush or compaction) is uploaded when it is
// closed: one request per started PartSize, the slowest part's latency plus the
// bytes at the bandwidth; other files and other filesystems upload nothing.
func TestUpload(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name         string
		upload       *Upload
		cat          vfs.DiskWriteCategory
		size         int
		wantRequests int64
		wantSlept    time.Duration
	}{
		{"small flushed table", &Upload{Latency: Latency{Median: 60 * time.Millisecond}}, "pebble-memtable-flush", 4096, 1, 60 * time.Millisecond},
		{"compacted table in parts", &Upload{Latency: Latency{Median: 60 * time.Millisecond}}, "pebble-compaction", 2*PartSize + 1, 3, 60 * time.Millisecond},
		// 100 ms of the 100 MiB/s bucket is free (the burst): 30 MiB take 0.2 s more.
		{"bandwidth", &Upload{Latency: Latency{Median: 60 * time.Millisecond}, Bandwidth: 100 * mib}, "pebble-compaction", 30 * mib, 2, 260 * time.Millisecond},
		{"WAL", &Upload{Latency: Latency{Median: 60 * time.Millisecond}}, "pebble-wal", 4096, 0, 0},
		{"not an object store", nil, "pebble-memtable-flush", 4096, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &fakeClock{now: time.Unix(0, 0)}
			fs := Wrap(vfs.NewMem(), NewThrottle(ThrottleConfig{Upload: tt.upload, Clock: c}))
			f, err := fs.Create("000001.sst", tt.cat)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write(make([]byte, tt.size)); err != nil {
				t.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
			if st := fs.Stats(); st.Uploads != 0 {
				t.Fatalf("uploaded %d requests before the file was closed", st.Uploads)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			st := fs.Stats()
			wantBytes := int64(tt.size)
			if tt.wantRequests == 0 {
				wantBytes = 0
			}
			if st.Uploads != tt.wantRequests || st.UploadBytes != wantBytes || c.slept != tt.wantSlept {
				t.Errorf("uploaded %d requests, %d bytes in %v; want %d, %d in %v", st.Uploads, st.UploadBytes, c.slept, tt.wantRequests, wantBytes, tt.wantSlept)
			}
		})
	}
}

// TestReadAheadCostsOperationsOnce: after Pebble's Prefetch of a range (its
// read-ahead), block reads inside it cost no operation of their own, even out of
// order; a read outside it does. Without the prefetch each jump is an operation.
func TestReadAheadCostsOperationsOnce(t *testing.T) {
	read := func(prefetch bool) time.Duration {
		c := &fakeClock{now: time.Unix(0, 0)}
		mem := vfs.NewMem()
		f, err := mem.Create("000001.sst", vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(make([]byte, 1<<20))
		f.Close()
		fs := Wrap(mem, NewThrottle(ThrottleConfig{IOPS: 1, Burst: time.Second, Clock: c}))
		r, err := fs.Open("000001.sst")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if prefetch {
			r.Prefetch(0, 512<<10) // two operations of 256 KiB
		}
		buf := make([]byte, 4096)
		for i := 62; i >= 0; i -= 2 { // every other block, backwards: no two contiguous
			r.ReadAt(buf, int64(i)*4096)
		}
		r.ReadAt(buf, 900<<10) // outside the read-ahead
		return c.slept
	}
	// At 1 operation/s with one in the bucket: 2 for the prefetch and 1 outside it
	// wait 2 s; 32 jumps and 1 more wait 32 s.
	if got := read(true); got != 2*time.Second {
		t.Errorf("with read-ahead: slept %v, want 2s", got)
	}
	if got := read(false); got != 32*time.Second {
		t.Errorf("without read-ahead: slept %v, want 32s", got)
	}
}
