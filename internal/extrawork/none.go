//go:build !instrtest

// Package extrawork adds known work to chosen places of a job in a test build (tag
// instrtest), so that tests can check which places a measurement sees; in any other
// build its functions are empty and inlined away.
package extrawork

// Load runs the extra work of loading table A (none in this build).
func Load() {}

// Verify runs the extra work of verifying the MV (none in this build).
func Verify() {}

// Row runs the extra work of one snapshot row (none in this build).
func Row() {}
