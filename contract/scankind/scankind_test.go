package scankind

import (
	"slices"
	"testing"
)

// TestKinds: the flag help and the lists derive from the one table of scan
// kinds, the default first in the help.
func TestKinds(t *testing.T) {
	for _, tc := range []struct {
		name, got, want string
	}{
		{"help", Help("snapshot"), "scan strategies, as RisingWave names them: snapshot (snapshot backfill, the default: one committed snapshot, then the upstream's change log, with barriers of its own), merged (no-shuffle backfill, deprecated: a pk-ordered merge of the actor's vnodes at every barrier) or per-vnode (arrangement backfill: each vnode on its own)"},
		{"help, merged first", Help("merged")[:52], "scan strategies, as RisingWave names them: merged (n"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
	if !slices.Equal(Names(), []string{"merged", "per-vnode", "snapshot"}) {
		t.Errorf("Names() = %v", Names())
	}
	if got := Recoverable(); !slices.Equal(got, []string{"merged", "per-vnode"}) {
		t.Errorf("Recoverable() = %v", got)
	}
	if k, ok := Lookup("snapshot"); !ok || !k.RunsCreatingJob || k.OnePositionPerActor {
		t.Errorf("Lookup(snapshot) = %+v, %v", k, ok)
	}
	if _, ok := Lookup("nope"); ok {
		t.Error("Lookup(nope) found a kind")
	}
}
