package judge

import (
	"math"
	"testing"
)

// TestWelch: counts with small noise and no pairing: a change well beyond the
// noise is significant at 5 rounds a side, an A/A one is not, and the cases the
// test cannot take go back to the rank tests.
func TestWelch(t *testing.T) {
	base := []float64{7000, 7007, 6995, 7003, 6998}
	scaled := func(v []float64, f float64) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = x * f
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		base, head []float64
		ok         bool
		pBelow     float64 // p < pBelow; 0: p ≥ 0.05
		delta      float64
	}{
		{"A/A", base, []float64{7004, 6996, 7001, 6999, 7006}, true, 0, 0.0000},
		{"+1 %", base, scaled(base, 1.01), true, 1e-6, 0.01},
		{"alike runs, changed", []float64{5, 5}, []float64{6, 6}, true, 1e-300, 0.2},
		{"one run", base[:1], base, false, 0, 0},
		{"a zero", []float64{0, 1}, base, false, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := welch(&GridCell{Raw: tc.base}, &GridCell{Raw: tc.head})
			if ok != tc.ok {
				t.Fatalf("ok %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if tc.pBelow == 0 && c.P < 0.05 || tc.pBelow > 0 && !(c.P < tc.pBelow) {
				t.Errorf("p %g, want %s", c.P, map[bool]string{true: "≥ 0.05", false: "tiny"}[tc.pBelow == 0])
			}
			if math.Abs(c.Delta-tc.delta) > 0.0015 {
				t.Errorf("delta %g, want ≈ %g", c.Delta, tc.delta)
			}
			if c.Lo == nil || c.Hi == nil || *c.Lo > c.Delta || *c.Hi < c.Delta {
				t.Errorf("interval %v–%v does not hold the change %g", c.Lo, c.Hi, c.Delta)
			}
		})
	}
}
