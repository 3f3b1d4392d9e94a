package contract

import "golang.org/x/perf/benchfmt"

// Instruction counts (benchrun --measure instructions): the job window's
// instructions under callgrind, per row (snapshot and upstream) and per barrier.
const (
	UnitInstrPerRow     = "instructions/row"
	UnitInstrPerBarrier = "instructions/barrier"
	// Config keys of counted results: counts compare only under the same valgrind
	// and the same settings.
	ConfigValgrind         = "valgrind"
	ConfigValgrindSettings = "valgrind-settings"
)

// instructionUnits: fewer instructions are better. Not assumed exact: Pebble's
// memtable skiplist draws its node heights from a generator seeded per process, so
// counts vary run to run by a few tenths of a percent.
func instructionUnits() []benchfmt.UnitMetadata {
	var u []benchfmt.UnitMetadata
	for _, unit := range []string{UnitInstrPerRow, UnitInstrPerBarrier} {
		u = append(u, benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: unit, Key: "better"}, OrigUnit: unit, Value: "lower"})
	}
	return u
}
