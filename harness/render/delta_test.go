package render

import (
	"testing"

	"github.com/backfill-bench/backfill-bench/harness/judge"
)

// TestFormatDeltaOfZeros: a rise from zero reads "from 0", zero on both sides its
// interval of none, and a base of zero without an interval "?".
func TestFormatDeltaOfZeros(t *testing.T) {
	zero := 0.0
	for _, tc := range []struct {
		f    judge.Finding
		want string
	}{
		{judge.Finding{FromZero: true}, "from 0"},
		{judge.Finding{Lo: &zero, Hi: &zero}, "+0.00% [+0.0%, +0.0%]"},
		{judge.Finding{}, "?"},
	} {
		if got := formatDelta(tc.f); got != tc.want {
			t.Errorf("formatDelta(%+v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}
