//go:build instrtest

// Package extrawork adds known work to chosen places of a job in a test build (tag
// instrtest), so that tests can check which places a measurement sees; in any other
// build its functions are empty and inlined away.
package extrawork

import (
	"os"
	"strconv"
)

// steps reads a place's steps once per process: a test build's only globals.
var loadSteps, verifySteps, rowSteps = steps(EnvLoad), steps(EnvVerify), steps(EnvRow)

func steps(env string) int {
	n, _ := strconv.Atoi(os.Getenv(env))
	return n
}

// Sink keeps the work from being optimized away.
var Sink uint64

// Spin runs n steps of a xorshift generator: a fixed number of instructions a step.
//
//go:noinline
func Spin(n int) {
	x := uint64(88172645463325252) + Sink
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	Sink = x
}

// Load runs the extra work of loading table A.
func Load() { Spin(loadSteps) }

// Verify runs the extra work of verifying the MV.
func Verify() { Spin(verifySteps) }

// Row runs the extra work of one snapshot row.
func Row() { Spin(rowSteps) }
