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
	tests := []struct {
		name        string
		rate, burst int64
		writes      []int
		gapBefore   []time.Duration
		wantSlept   time.Duration
	}{
		{"within burst", 1000, 500, []int{200, 300}, []time.Duration{0, 0}, 0},
		{"over burst waits for the excess", 1000, 500, []int{500, 250}, []time.Duration{0, 0}, 250 * time.Millisecond},
		{"idle time refills", 1000, 500, []int{500, 500}, []time.Duration{0, 500 * time.Millisecond}, 0},
		{"refill caps at burst", 1000, 500, []int{500, 1000}, []time.Duration{0, 10 * time.Second}, 500 * time.Millisecond},
		{"sustained rate", 1000, 100, []int{100, 1000, 1000, 1000}, []time.Duration{0, 0, 0, 0}, 3 * time.Second},
		{"unlimited", 0, 0, []int{1 << 30}, []time.Duration{0}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &fakeClock{now: time.Unix(0, 0)}
			th := NewThrottle(tt.rate, tt.burst, SyncLatency{}, c)
			for i, n := range tt.writes {
				c.now = c.now.Add(tt.gapBefore[i])
				th.Write(n)
			}
			if d := c.slept - tt.wantSlept; d < -time.Microsecond || d > time.Microsecond {
				t.Errorf("slept %v, want %v", c.slept, tt.wantSlept)
			}
		})
	}
}

func TestThrottleSyncLatency(t *testing.T) {
	c := &fakeClock{now: time.Unix(0, 0)}
	th := NewThrottle(0, 0, SyncLatency{Median: 2 * time.Millisecond}, c)
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
	draw := func(sync SyncLatency) []time.Duration {
		c := &fakeClock{now: time.Unix(0, 0)}
		th := NewThrottle(0, 0, sync, c)
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
	tail := SyncLatency{Median: time.Millisecond, P99: 6 * time.Millisecond, Seed: 1}
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
	for _, d := range draw(SyncLatency{Median: time.Millisecond, P99: time.Millisecond, Seed: 1}) {
		if d != time.Millisecond {
			t.Fatalf("a sync with p99 = median took %v, want 1ms", d)
		}
	}
}

func TestThrottleSyncMakesUpForOversleep(t *testing.T) {
	c := &fakeClock{now: time.Unix(0, 0), overshoot: 300 * time.Microsecond}
	th := NewThrottle(0, 0, SyncLatency{Median: time.Millisecond}, c)
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
	fs := Wrap(vfs.NewMem(), NewThrottle(rate, 0, SyncLatency{Median: latency}, nil))
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
