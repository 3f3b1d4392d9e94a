//go:build !linux

package runner

import (
	"context"

	"github.com/backfill-bench/backfill-bench/bench/profile"
)

// runDuet is never called here (ParsePairing and DefaultPairing refuse Duet); it
// runs the two back to back and says so.
func (p *pass) runDuet(ctx context.Context, prof profile.Profile, a, b Trial) ([]outcome, bool) {
	return []outcome{p.runOne(ctx, p.sides[a.Side], prof, a), p.runOne(ctx, p.sides[b.Side], prof, b)}, false
}
