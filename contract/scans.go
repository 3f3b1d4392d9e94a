package contract

import "strings"

// ScanKind is one scan strategy of the backfill executor and what the rest of the
// benchmark must know of it. Adding a kind is one entry here and its strategy in
// bench/backfill (README "Adding a scan kind").
type ScanKind struct {
	Name   string // in cell names and flags
	Engine string // RisingWave's name for it
	Note   string // e.g. "deprecated"
	Help   string // what it does, in a few words
	// OnePositionPerActor: the actor's vnodes are scanned merged in pk order, so
	// every vnode's state row holds the actor's one position (otherwise each vnode
	// has its own).
	OnePositionPerActor bool
	// RunsCreatingJob: the backfill runs as a creating job with barriers and
	// epochs of its own, then replays the upstream's change log and joins it
	// (otherwise it commits in the upstream's epochs).
	RunsCreatingJob bool
	// Recovers: a job stopped mid-way can resume from its persisted state.
	Recovers bool
}

// ScanKinds are the scan strategies, in the executor's order (backfill.Scan is the
// index). The first with RunsCreatingJob is the engine's default.
var ScanKinds = []ScanKind{
	{Name: "merged", Engine: "no-shuffle backfill", Note: "deprecated", Help: "a pk-ordered merge of the actor's vnodes at every barrier",
		OnePositionPerActor: true, Recovers: true},
	{Name: "per-vnode", Engine: "arrangement backfill", Help: "each vnode on its own", Recovers: true},
	{Name: "snapshot", Engine: "snapshot backfill", Note: "the default", Help: "one committed snapshot, then the upstream's change log, with barriers of its own",
		RunsCreatingJob: true},
}

// LookupScan returns the kind named name.
func LookupScan(name string) (ScanKind, bool) {
	for _, k := range ScanKinds {
		if k.Name == name {
			return k, true
		}
	}
	return ScanKind{}, false
}

func scanNames() []string {
	names := make([]string, len(ScanKinds))
	for i, k := range ScanKinds {
		names[i] = k.Name
	}
	return names
}

// ScanHelp describes the scan kinds for a flag's help, the default (def) first:
// "snapshot (snapshot backfill, the default: …), merged (…) or per-vnode (…)".
func ScanHelp(def string) string {
	var parts []string
	for _, k := range ScanKinds {
		engine := k.Engine
		if k.Note != "" {
			engine += ", " + k.Note
		}
		p := k.Name + " (" + engine + ": " + k.Help + ")"
		if k.Name == def {
			parts = append([]string{p}, parts...)
		} else {
			parts = append(parts, p)
		}
	}
	last := len(parts) - 1
	return "scan strategies, as RisingWave names them: " + strings.Join(parts[:last], ", ") + " or " + parts[last]
}

// RecoverableScans are the names of the kinds that can resume after a crash.
func RecoverableScans() []string {
	var names []string
	for _, k := range ScanKinds {
		if k.Recovers {
			names = append(names, k.Name)
		}
	}
	return names
}
