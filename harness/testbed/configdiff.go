package testbed

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/backfill-bench/backfill-bench/contract"
)

// MachinesOf lists the machine fingerprints of results.
func MachinesOf(rs []*benchfmt.Result) string {
	var seen []string
	for _, r := range rs {
		if m := r.GetConfig(contract.ConfigMachine); !slices.Contains(seen, m) {
			seen = append(seen, m)
		}
	}
	return strings.Join(seen, " ")
}

// ConfigDiff names the configuration keys, not ignored by a comparison, whose
// values differ between the two sides.
func ConfigDiff(base, head []*benchfmt.Result) string {
	ignored := strings.Split(contract.CompareIgnore, ",")
	values := func(rs []*benchfmt.Result) map[string]map[string]bool {
		out := map[string]map[string]bool{}
		for _, r := range rs {
			for _, c := range r.Config {
				if c.File && !slices.Contains(ignored, c.Key) {
					if out[c.Key] == nil {
						out[c.Key] = map[string]bool{}
					}
					out[c.Key][string(c.Value)] = true
				}
			}
		}
		return out
	}
	b, h := values(base), values(head)
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(b)) {
		bv, hv := slices.Sorted(maps.Keys(b[k])), slices.Sorted(maps.Keys(h[k]))
		if !slices.Equal(bv, hv) {
			diffs = append(diffs, fmt.Sprintf("%s: %s in base, %s in head", k, strings.Join(bv, " "), cmp.Or(strings.Join(hv, " "), "none")))
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	msg := "; their configurations differ (" + strings.Join(diffs, "; ") + ")"
	if b[contract.ConfigMachine] != nil && !slices.Equal(slices.Sorted(maps.Keys(b[contract.ConfigMachine])), slices.Sorted(maps.Keys(h[contract.ConfigMachine]))) {
		msg += ": results of different machines are not comparable; measure both sides on one machine, or pass --across-machines"
	}
	return msg
}
