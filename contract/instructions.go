package contract

import "golang.org/x/perf/benchfmt"

// Instruction counts (benchrun --measure instructions): the job window's
// instructions under callgrind, per row (snapshot and upstream) and per barrier.
const (
	UnitInstrPerRow     = "instructions/row"
	UnitInstrPerBarrier = "instructions/barrier"
	// UnitSkiplistPerRow is the window's instructions in Pebble's memtable skiplist
	// per row: left out of the two above and not judged, as its node heights (so the
	// work of its inserts and searches) are random per process.
	UnitSkiplistPerRow = "skiplist-instructions/row"
	// Config keys of counted results: counts compare only under the same valgrind
	// and the same settings.
	ConfigValgrind         = "valgrind"
	ConfigValgrindSettings = "valgrind-settings"
)

// instructionUnits: fewer instructions are better. Not assumed exact: scheduling
// still moves counts a little run to run (Pebble's memtable skiplist, whose node
// heights are random per process, is counted apart).
func instructionUnits() []benchfmt.UnitMetadata {
	var u []benchfmt.UnitMetadata
	for _, unit := range []string{UnitInstrPerRow, UnitInstrPerBarrier, UnitSkiplistPerRow} {
		u = append(u, benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: unit, Key: "better"}, OrigUnit: unit, Value: "lower"})
	}
	return u
}
