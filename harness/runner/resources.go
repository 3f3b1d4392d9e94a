package runner

import (
	"fmt"
	"slices"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/runner/cost"
	"github.com/backfill-bench/backfill-bench/harness/testbed"
)

// FitRoom keeps the cells whose jobs fit the room, using at most 80 % of it, and
// says for each one left out what it needs, what there is, and what to do. Under
// Duet pairing a cell that will run beside its persist partner gets half the room:
// both jobs hold their tables at once.
func FitRoom(cells []contract.Cell, set *profile.Set, room testbed.Room, pairing Pairing) (kept []contract.Cell, skipped []string) {
	for _, c := range cells {
		p, err := set.Get(c.Profile)
		if err != nil {
			kept = append(kept, c) // the runner reports an unknown profile itself
			continue
		}
		need := cost.Bytes(c)
		var have int64
		var where, fix string
		switch p.FS {
		case profile.FSMem:
			have, where, fix = room.Memory, "memory (the in-memory filesystem holds the tables)", "run it on a disk profile or with fewer rows"
		case profile.FSDisk:
			dir := p.JobDir()
			if room.Disk != nil {
				have, _ = room.Disk(dir)
			}
			where, fix = "free disk at "+dir, "free space there or set the profile's dir"
		}
		if pairing == Duet && duetFits(p) && slices.ContainsFunc(cells, func(d contract.Cell) bool { return persistPair(c, d) }) {
			have /= 2
			where += ", half of it in a duet"
			fix += ", or use --pairing sequential"
		}
		if have > 0 && float64(need) > 0.8*float64(have) {
			skipped = append(skipped, fmt.Sprintf("%s: needs about %s of %s, %s there (it uses at most 80 %%); %s",
				c.Name(), gib(need), where, gib(have), fix))
			continue
		}
		kept = append(kept, c)
	}
	return kept, skipped
}

func gib(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }
