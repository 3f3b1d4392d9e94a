package contract

import "golang.org/x/perf/benchfmt"

// The creating job's units. barrier-p50-sec, barrier-p99-sec and barrier-max-sec
// are the upstream's barriers for every scan: for the coupled scans (merged,
// per-vnode) the creating job commits in the upstream's epochs, so its barriers are
// the same; for snapshot the upstream runs its own barriers and these say what the
// backfill costs the upstream, the creating job's being creating-barrier-*. The
// upstream-* and creating-* units are reported for every scan, so that one table
// compares scans (for the coupled ones both equal barrier-*).
const (
	UnitUpstreamP50 = "upstream-barrier-p50-sec" // over the upstream's regular barriers
	UnitUpstreamP99 = "upstream-barrier-p99-sec"
	UnitCreatingP50 = "creating-barrier-p50-sec" // over the creating job's regular barriers
	UnitCreatingP99 = "creating-barrier-p99-sec"
	// The upstream epochs sealed that the creating job's MV did not hold yet, at each
	// of its commits (0 for the coupled scans): the largest and the median.
	UnitCreatingLagMax = "creating-lag-max-epochs"
	UnitCreatingLagP50 = "creating-lag-p50-epochs"
)

// creatingUnits are the creating job's units, all better lower.
func creatingUnits() []benchfmt.UnitMetadata {
	var out []benchfmt.UnitMetadata
	for _, u := range []string{UnitUpstreamP50, UnitUpstreamP99, UnitCreatingP50, UnitCreatingP99, UnitCreatingLagMax, UnitCreatingLagP50} {
		out = append(out, benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: u, Key: "better"}, OrigUnit: u, Value: "lower"})
	}
	return out
}
