// Package scankind is the one table of the backfill's scan kinds and their properties.
package scankind

import "strings"

// Kind is one scan strategy of the backfill executor and what the rest of the
// benchmark must know of it. Adding a kind is one entry here and its strategy in
// bench/backfill (README "Adding a scan kind").
type Kind struct {
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

// Kinds are the scan strategies, in the executor's order (backfill.Scan is the
// index). The first with RunsCreatingJob is the engine's default.
var Kinds = []Kind{
	{Name: "merged", Engine: "no-shuffle backfill", Note: "deprecated", Help: "a pk-ordered merge of the actor's vnodes at every barrier",
		OnePositionPerActor: true, Recovers: true},
	{Name: "per-vnode", Engine: "arrangement backfill", Help: "each vnode on its own", Recovers: true},
	{Name: "snapshot", Engine: "snapshot backfill", Note: "the default", Help: "one committed snapshot, then the upstream's change log, with barriers of its own",
		RunsCreatingJob: true},
}

// Lookup returns the kind named name.
func Lookup(name string) (Kind, bool) {
	for _, k := range Kinds {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// Names are the kinds' names, in order.
func Names() []string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = k.Name
	}
	return names
}

// Help describes the scan kinds for a flag's help, the default (def) first:
// "snapshot (snapshot backfill, the default: …), merged (…) or per-vnode (…)".
func Help(def string) string {
	var parts []string
	for _, k := range Kinds {
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

// Recoverable are the names of the kinds that can resume after a crash.
func Recoverable() []string {
	var names []string
	for _, k := range Kinds {
		if k.Recovers {
			names = append(names, k.Name)
		}
	}
	return names
}
