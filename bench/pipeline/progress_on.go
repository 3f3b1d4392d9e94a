//go:build !noprogresscheck

package pipeline

// checkProgress is whether jobs run the progress check: always, except in a test
// build with tag noprogresscheck, which exists only to measure the check's cost.
const checkProgress = true
