package stats

import (
	"fmt"
	"math"
	"sort"
)

// Corrections for testing many (cell, metric) pairs at once.
const (
	Holm = "holm" // Holm–Bonferroni: controls the chance of any false alarm
	BH   = "bh"   // Benjamini–Hochberg: controls the expected share of false alarms
)

// Adjust returns p-values adjusted for testing them all together.
func Adjust(method string, p []float64) ([]float64, error) {
	m := len(p)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return p[order[a]] < p[order[b]] })
	adj := make([]float64, m)
	switch method {
	case Holm:
		running := 0.0
		for rank, i := range order {
			running = math.Max(running, math.Min(1, float64(m-rank)*p[i]))
			adj[i] = running
		}
	case BH:
		running := 1.0
		for rank := m - 1; rank >= 0; rank-- {
			i := order[rank]
			running = math.Min(running, math.Min(1, float64(m)*p[i]/float64(rank+1)))
			adj[i] = running
		}
	default:
		return nil, fmt.Errorf("correction %q: want %s or %s", method, Holm, BH)
	}
	return adj, nil
}
