// Package cellsdiff adds to a matrix the cells a change may touch, from rules over
// the changed paths (ci/cells-by-path.json).
package cellsdiff

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/backfill-bench/backfill-bench/contract"
)

// pathCells is one rule of a cells-from-diff file: when a changed file matches one
// of Paths (path.Match patterns; a pattern ending in "/" matches everything
// under it), the matrix gains the values of Add, a dimension to a list as the
// flags take it.
type pathCells struct {
	Paths []string          `json:"paths"`
	Add   map[string]string `json:"add"`
	Why   string            `json:"why"`
}

// Add reads the rules of file and adds to m the values of every rule a
// changed path matches; it returns a note per rule that fired.
func Add(m *contract.Matrix, file string, changed []string) ([]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--cells-from-diff: %w", err)
	}
	var rules []pathCells
	if err := json.Unmarshal(data, &rules); err != nil {
		return nil, fmt.Errorf("--cells-from-diff %s: %w (want a JSON list of {\"paths\": [...], \"add\": {\"dimension\": \"values\"}, \"why\": \"...\"})", file, err)
	}
	var notes []string
	for i, r := range rules {
		if len(r.Paths) == 0 || len(r.Add) == 0 {
			return nil, fmt.Errorf("--cells-from-diff %s: rule %d: want paths and add", file, i+1)
		}
		hit := ""
		for _, c := range changed {
			if matchesAny(r.Paths, c) {
				hit = c
				break
			}
		}
		if hit == "" {
			continue
		}
		for dim, values := range r.Add {
			if err := m.Set(dim, m.Get(dim)+","+values); err != nil {
				return nil, fmt.Errorf("--cells-from-diff %s: rule %d: %w", file, i+1, err)
			}
		}
		notes = append(notes, fmt.Sprintf("%s changed, so the matrix also has %s (%s)", hit, formatAdd(r.Add), r.Why))
	}
	return notes, nil
}

func matchesAny(patterns []string, file string) bool {
	for _, p := range patterns {
		if strings.HasSuffix(p, "/") && strings.HasPrefix(file, p) {
			return true
		}
		if ok, _ := path.Match(p, file); ok {
			return true
		}
	}
	return false
}

func formatAdd(add map[string]string) string {
	var parts []string
	for _, d := range contract.DimensionNames() {
		if v, ok := add[d]; ok {
			parts = append(parts, d+"="+v)
		}
	}
	return strings.Join(parts, " ")
}
