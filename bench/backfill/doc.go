// Package backfill is the backfill executor: it scans table A's snapshot while
// merging A's change stream, and writes the result into the MV table B.
package backfill

import "github.com/backfill-bench/backfill-bench/bench/ratelimit"

// Paused is the rate limit that reads no snapshot rows (the engine's limit of 0).
const Paused = ratelimit.Paused
