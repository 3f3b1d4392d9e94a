// Package heap paces the bench process's garbage collector: the engine it models
// is written in Rust and has none, so the model's collections are its own cost.
package heap

import "runtime/debug"

// GCPercent is the GOGC a bench process runs with unless its environment sets
// GOGC: the heap may grow to five times what is live between collections. At the
// default (100), Pebble's in-memory files, which grow by copying, set off a
// collection every few megabytes written; measured in README "Garbage collection".
const GCPercent = 400

// limitShare is the share of the machine's memory the process's heap may use
// before the collector works harder than GCPercent asks (GOMEMLIMIT), so that
// a large job's fivefold heap does not run the machine out of memory.
const limitShare = 0.9

// Setting is what Configure set; zero fields: left as the environment has them.
type Setting struct {
	GCPercent   int   // 0: GOGC from the environment
	MemoryLimit int64 // bytes; 0: GOMEMLIMIT from the environment, or no memory figure
}

// Configure sets GCPercent, and a memory limit of limitShare of totalMemory
// (when known, > 0), each unless getenv says the environment sets it (GOGC,
// GOMEMLIMIT: callgrind's counting runs set GOGC=off, for one).
func Configure(getenv func(string) string, totalMemory int64) Setting {
	var s Setting
	if getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
		s.GCPercent = GCPercent
	}
	if getenv("GOMEMLIMIT") == "" && totalMemory > 0 {
		s.MemoryLimit = int64(limitShare * float64(totalMemory))
		debug.SetMemoryLimit(s.MemoryLimit)
	}
	return s
}
