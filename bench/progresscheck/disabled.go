//go:build noprogresscheck

package progresscheck

// Enabled is false in this build (tag noprogresscheck): jobs run unchecked,
// keeping only each actor's latest position for the boundary changes, so the
// check's cost can be measured against a default build. Never for real runs.
const Enabled = false
