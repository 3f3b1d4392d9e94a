package heap

import (
	"runtime/debug"
	"testing"
)

// TestConfigure: the process gets GCPercent and a limit of limitShare of the
// machine's memory, each unless the environment sets its own.
func TestConfigure(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	for _, tc := range []struct {
		env   map[string]string
		total int64
		want  Setting
	}{
		{nil, 1000, Setting{GCPercent: GCPercent, MemoryLimit: 900}},
		{nil, 0, Setting{GCPercent: GCPercent}},
		{map[string]string{"GOGC": "off"}, 1000, Setting{MemoryLimit: 900}},
		{map[string]string{"GOGC": "50", "GOMEMLIMIT": "1GiB"}, 1000, Setting{}},
	} {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(1 << 40)
		got := Configure(func(k string) string { return tc.env[k] }, tc.total)
		if got != tc.want {
			t.Errorf("env %v, %d B: set %+v, want %+v", tc.env, tc.total, got, tc.want)
		}
		wantPercent, wantLimit := 100, int64(1<<40)
		if tc.want.GCPercent != 0 {
			wantPercent = tc.want.GCPercent
		}
		if tc.want.MemoryLimit != 0 {
			wantLimit = tc.want.MemoryLimit
		}
		if p := debug.SetGCPercent(100); p != wantPercent {
			t.Errorf("env %v: GOGC now %d, want %d", tc.env, p, wantPercent)
		}
		if l := debug.SetMemoryLimit(-1); l != wantLimit {
			t.Errorf("env %v: memory limit now %d, want %d", tc.env, l, wantLimit)
		}
	}
}

// TestTotalMemory: on Linux the machine's memory is known, and more than a
// gigabyte on any machine that runs the suite.
func TestTotalMemory(t *testing.T) {
	m := TotalMemory()
	if m == 0 {
		t.Skip("memory unknown on this OS")
	}
	if m < 1<<30 {
		t.Errorf("TotalMemory() = %d B, want at least 1 GiB", m)
	}
}
