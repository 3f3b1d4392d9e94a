package stats

import (
	"math"
	"testing"
)

func TestAdjust(t *testing.T) {
	p := []float64{0.01, 0.04, 0.03, 0.005}
	for _, tc := range []struct {
		method string
		want   []float64
	}{
		// Holm: sorted 0.005 0.01 0.03 0.04 × 4 3 2 1 = 0.02 0.03 0.06 0.04 → running max.
		{Holm, []float64{0.03, 0.06, 0.06, 0.02}},
		// BH: sorted × 4/1 4/2 4/3 4/4 = 0.02 0.02 0.04 0.04 → running min from the top.
		{BH, []float64{0.02, 0.04, 0.04, 0.02}},
	} {
		got, err := Adjust(tc.method, p)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-12 {
				t.Errorf("%s: adjusted %v, want %v", tc.method, got, tc.want)
				break
			}
		}
	}
	if _, err := Adjust("bonferroni", p); err == nil {
		t.Error("unknown correction accepted")
	}
}
