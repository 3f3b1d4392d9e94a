package testbed

import (
	"fmt"
	"strconv"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
)

// AddConfig adds the harness's config keys to a result from the bench binary, which
// itself gives goos, goarch, pkg and cpu: what it is attributed to (src), where it
// ran (m, p), on how many Ps and paired how ("": alone).
func AddConfig(r *benchfmt.Result, src Checkout, m Machine, p profile.Profile, procs int, pairing string) {
	commitTime := ""
	if !src.CommitTime.IsZero() {
		commitTime = src.CommitTime.UTC().Format(time.RFC3339)
	}
	for _, kv := range [][2]string{
		{contract.ConfigCommit, src.Commit},
		{contract.ConfigCommitTime, commitTime},
		{contract.ConfigBranch, src.Branch},
		{contract.ConfigDirty, strconv.FormatBool(src.Dirty)},
		{contract.ConfigGo, src.GoVersion},
		{contract.ConfigPebble, src.Pebble},
		{contract.ConfigCores, strconv.Itoa(m.Cores)},
		{contract.ConfigGOMAXPROCS, strconv.Itoa(procs)},
		{contract.ConfigMachine, m.Fingerprint},
		{contract.ConfigProfile, fmt.Sprintf("%s v%d", p.Name, p.Version)},
		{contract.ConfigDisk, diskOf(p)},
		{contract.ConfigPairing, pairing},
	} {
		if kv[1] != "" {
			SetFileConfig(r, kv[0], kv[1])
		}
	}
}

// SetFileConfig sets key to value on r as a file configuration line, so that
// benchfmt.Writer writes it to the results file as the binary's own are; a plain
// SetConfig would be a name-level key and never be written.
func SetFileConfig(r *benchfmt.Result, key, value string) {
	r.SetConfig(key, value)
	i, _ := r.ConfigIndex(key)
	r.Config[i].File = true
}

// diskOf is the profile's disk as results record it: a real disk also names the
// filesystem its jobs ran on, since a temp dir on tmpfs is no disk at all.
func diskOf(p profile.Profile) string {
	if p.FS != profile.FSDisk {
		return p.Disk()
	}
	fs, err := profile.Filesystem(p.JobDir())
	if err != nil {
		fs = "unknown filesystem"
	}
	return p.Disk() + " (" + fs + " at " + p.JobDir() + ")"
}
