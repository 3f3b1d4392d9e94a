//go:build race

package baseline

// raceSlowdown stretches the test jobs' barrier intervals under the race detector
// (and slows their scan and change rates to match, so they keep their epochs), which
// makes reopening a scan several times slower: with barriers shorter than a reopen,
// every epoch reads the one row progress is guaranteed (the engine's
// one-row-per-barrier starvation) and the jobs would take minutes.
const raceSlowdown = 8
