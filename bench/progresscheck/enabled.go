//go:build !noprogresscheck

package progresscheck

// Enabled is whether jobs run the progress check: always, except in a test build
// with tag noprogresscheck, which exists only to measure the check's cost.
const Enabled = true
