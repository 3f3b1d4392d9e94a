package testbed

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/profile"
)

// TestDiskOf: results name a real disk's filesystem and directory (the temp dir
// when the profile names none), say when it cannot be read, and record an
// in-memory profile's disk as the profile describes it.
func TestDiskOf(t *testing.T) {
	dir := t.TempDir()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // os.TempDir, the job dir of a profile without one
	fsOf := func(d string) string {
		fs, err := profile.Filesystem(d)
		if err != nil {
			t.Fatal(err)
		}
		return fs
	}
	missing := filepath.Join(dir, "missing")
	for _, tt := range []struct {
		name string
		p    profile.Profile
		want string
	}{
		{"in-memory", profile.Profile{FS: profile.FSMem}, "in-memory"},
		{"simulated in-memory", profile.Profile{FS: profile.FSMem, WriteBandwidth: 25 << 20, SyncLatency: 10 * time.Millisecond},
			"simulated 25MiB/s 10ms per sync on in-memory"},
		{"disk in its dir", profile.Profile{FS: profile.FSDisk, Dir: dir}, "real disk (" + fsOf(dir) + " at " + dir + ")"},
		{"disk in the temp dir", profile.Profile{FS: profile.FSDisk}, "real disk (" + fsOf(tmp) + " at " + tmp + ")"},
		{"disk with a missing dir", profile.Profile{FS: profile.FSDisk, Dir: missing}, "real disk (unknown filesystem at " + missing + ")"},
		{"simulated disk", profile.Profile{FS: profile.FSDisk, Dir: dir, SyncLatency: time.Millisecond},
			"simulated unlimited/s 1ms per sync on real disk (" + fsOf(dir) + " at " + dir + ")"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := diskOf(tt.p); got != tt.want {
				t.Errorf("diskOf = %q, want %q", got, tt.want)
			}
		})
	}
}
