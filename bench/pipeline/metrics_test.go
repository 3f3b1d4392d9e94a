package pipeline

import (
	"testing"

	"github.com/backfill-bench/backfill-bench/bench/meterfs"
)

// TestWriteAmpAndPersistBytes: write-amp divides by the MV's and the upstream's
// bytes only, so state bytes raise it; persist-B/op is the state's logical bytes
// plus its share of the WAL, flush and compaction bytes, 0 without state. Each
// "wider state" case is its base with the state rows made wider on purpose (more
// state bytes, written once more to the WAL and flushed and compacted in the same
// proportion): both metrics must get worse.
func TestWriteAmpAndPersistBytes(t *testing.T) {
	job := func(upstream, mv, state, wal, flush, compaction int64) *Result {
		r := &Result{Logical: LogicalBytes{Upstream: upstream, MV: mv, State: state}}
		r.FS.Bytes[meterfs.WAL], r.FS.Bytes[meterfs.Flush], r.FS.Bytes[meterfs.Compaction] = wal, flush, compaction
		r.FS.Bytes[meterfs.Manifest] = 100 // counted in write-amp, attributed to no table
		return r
	}
	tests := []struct {
		name     string
		r        *Result
		wantAmp  float64
		want     PersistBytes
		narrower string // the case this one widens the state of
	}{
		{"persist=off", job(1000, 9000, 0, 11000, 0, 0), 1.11, PersistBytes{}, ""},
		// State 2 500 of 12 500 logical bytes: a fifth of each category.
		{"persist=on", job(1000, 9000, 2500, 13750, 5000, 10000), (13750 + 5000 + 10000 + 100) / 10000.0,
			PersistBytes{Logical: 2500, WAL: 2750, Flush: 1000, Compaction: 2000}, ""},
		{"persist=on, wider state", job(1000, 9000, 5000, 16500, 6000, 12000), (16500 + 6000 + 12000 + 100) / 10000.0,
			PersistBytes{Logical: 5000, WAL: 5500, Flush: 2000, Compaction: 4000}, "persist=on"},
		{"no data: no ratio", job(0, 0, 0, 0, 0, 0), 0, PersistBytes{}, ""},
	}
	byName := map[string]*Result{}
	for _, tc := range tests {
		byName[tc.name] = tc.r
		if got := tc.r.WriteAmp(); got != tc.wantAmp {
			t.Errorf("%s: write-amp %v, want %v", tc.name, got, tc.wantAmp)
		}
		if got := tc.r.Persist(); got != tc.want {
			t.Errorf("%s: persist bytes %+v, want %+v", tc.name, got, tc.want)
		}
		if tc.narrower == "" {
			continue
		}
		n := byName[tc.narrower]
		if tc.r.WriteAmp() <= n.WriteAmp() {
			t.Errorf("%s: write-amp %v, not above %v with narrower state rows", tc.name, tc.r.WriteAmp(), n.WriteAmp())
		}
		if tc.r.Persist().Total() <= n.Persist().Total() {
			t.Errorf("%s: persist bytes %d, not above %d with narrower state rows", tc.name, tc.r.Persist().Total(), n.Persist().Total())
		}
	}
	// The settle's ratio has the same denominator.
	r := job(1000, 9000, 2500, 0, 0, 0)
	r.Settle.Bytes[meterfs.Compaction] = 20000
	if got := r.SettleWriteAmp(); got != 2 {
		t.Errorf("settle-write-amp %v, want 20000 ÷ 10000 = 2", got)
	}
}
