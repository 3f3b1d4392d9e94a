package contract

import (
	"slices"
	"testing"
)

// TestScanKinds: the flag help and the lists derive from the one table of scan
// kinds, the default first in the help.
func TestScanKinds(t *testing.T) {
	for _, tc := range []struct {
		name, got, want string
	}{
		{"help", ScanHelp("snapshot"), "scan strategies, as RisingWave names them: snapshot (snapshot backfill, the default: one committed snapshot, then the upstream's change log, with barriers of its own), merged (no-shuffle backfill, deprecated: a pk-ordered merge of the actor's vnodes at every barrier) or per-vnode (arrangement backfill: each vnode on its own)"},
		{"help, merged first", ScanHelp("merged")[:52], "scan strategies, as RisingWave names them: merged (n"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
	if !slices.Equal(Scans, []string{"merged", "per-vnode", "snapshot"}) {
		t.Errorf("Scans = %v", Scans)
	}
	if got := RecoverableScans(); !slices.Equal(got, []string{"merged", "per-vnode"}) {
		t.Errorf("RecoverableScans() = %v", got)
	}
	if k, ok := LookupScan("snapshot"); !ok || !k.RunsCreatingJob || k.OnePositionPerActor {
		t.Errorf("LookupScan(snapshot) = %+v, %v", k, ok)
	}
	if _, ok := LookupScan("nope"); ok {
		t.Error("LookupScan(nope) found a kind")
	}
}
