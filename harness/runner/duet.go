package runner

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/testbed"
)

// Pairing is how the two runs of a pair (a cell's base and head; in a plain run
// its persist off and on) share the machine.
type Pairing string

const (
	// Sequential runs them back to back, each with the whole machine.
	Sequential Pairing = "sequential"
	// Duet runs them at once, each pinned to its own half of the CPUs, the halves
	// traded every duetSwap, their timed jobs started together. On a VM the CPUs
	// are not equal, nor steady: each shares its core's caches with neighbours that
	// come and go. Run at once, both jobs meet the same moments; trading CPUs, the
	// same CPUs. Measured on a 2-vCPU VM (quick cell, A/A): the paired spread of
	// rows/s was 14 % back to back, 9 % at once but pinned to fixed CPUs, 21 % at
	// once unpinned, 2.5 % at once trading CPUs.
	Duet Pairing = "duet"
)

// duetSwap is how often the two runs of a duet trade CPUs: short against a job
// (a quick cell's job takes ~0.4 s on one CPU), long against the cost of moving
// (a few µs and a cold L1/L2, alike for both).
const duetSwap = 20 * time.Millisecond

// ParsePairing reads --pairing; "" is the machine's default.
func ParsePairing(s string) (Pairing, error) {
	switch Pairing(s) {
	case "":
		return DefaultPairing(), nil
	case Sequential:
		return Sequential, nil
	case Duet:
		if err := testbed.PinSupported(); err != nil {
			return "", fmt.Errorf("--pairing duet: %w; use --pairing sequential", err)
		}
		return Duet, nil
	}
	return "", fmt.Errorf("--pairing %q: want duet or sequential", s)
}

// DefaultPairing is Duet where this machine can run one, else Sequential.
func DefaultPairing() Pairing {
	if testbed.PinSupported() != nil {
		return Sequential
	}
	return Duet
}

// paired reports whether b is a's partner in the plan: the same round, and the
// same cell on the other side, or in a plain run the same cell with persistence
// flipped.
func paired(a, b Trial) bool {
	if a.Round != b.Round {
		return false
	}
	if a.Side != b.Side {
		return a.Cell == b.Cell
	}
	return persistPair(a.Cell, b.Cell)
}

// duetProcs is how many CPUs each run of a duet gets: the profile's count, else
// half of those this process may use.
func duetProcs(p profile.Profile) int {
	if p.CPUs > 0 {
		return p.CPUs
	}
	return max(1, len(testbed.CPUs())/2)
}

// duetFits reports whether two runs of the profile fit side by side.
func duetFits(p profile.Profile) bool { return 2*duetProcs(p) <= len(testbed.CPUs()) }

// gated reports whether every side's bench binary has the start gate a duet
// needs; one built before it (an older commit) makes the pass run its pairs back
// to back, and says so. Any other failure of the probe is an error: a pass must not
// change how it pairs by accident.
func (p *pass) gated(ctx context.Context) (bool, error) {
	for _, s := range p.sides {
		var out bytes.Buffer
		err := Job{Binary: s.Binary, Args: []string{"-test.run", "^$", "-test.bench", "^$"}, Diagnostics: []string{"-" + contract.FlagStartGate + "=false"},
			Timeout: time.Minute, Stdout: &out, Stderr: &out}.Run(ctx)
		switch {
		case ctx.Err() != nil:
			return false, nil // interrupted: the pass stops before its first trial
		case err == nil:
		case strings.Contains(out.String(), "flag provided but not defined: -"+contract.FlagStartGate):
			p.cfg.Logger.Warn("this bench binary has no -"+contract.FlagStartGate+" (built before it): the runs of each pair go one after the other, as with --pairing sequential",
				"side", s.Label, "binary", s.Binary)
			return false, nil
		default:
			line, _, _ := strings.Cut(strings.TrimSpace(out.String()), "\n")
			return false, fmt.Errorf("probing %s for -%s: %v %s", s.Binary, contract.FlagStartGate, err, line)
		}
	}
	return true, nil
}
