package rates_test

import (
	"strings"
	"testing"
	"time"

	"github.com/backfill-bench/backfill-bench/contract/rates"
)

func TestCadenceAndRates(t *testing.T) {
	for in, want := range map[string]string{"100ms": "100ms", "1m30s": "1m30s", "50krows": "50krows", "50000rows": "50krows", "1500rows": "1500rows", "2mrows": "2mrows"} {
		c, err := rates.ParseCadence(in)
		if err != nil || c.String() != want {
			t.Errorf("ParseCadence(%q) = %v, %v; want %s", in, c, err, want)
		}
	}
	for _, bad := range []string{"0rows", "rows", "-5rows", "0s", "soon", "100ns "} {
		if _, err := rates.ParseCadence(bad); err == nil {
			t.Errorf("ParseCadence(%q): no error", bad)
		}
	}
	for in, perEpoch := range map[string]int64{"10k/s": 1000, "500/epoch": 500, "0/s": 0, "default": 1000} {
		r, err := rates.ParseChangeRate(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.ChangesPerEpoch(rates.Every(100 * time.Millisecond)); got != perEpoch {
			t.Errorf("%s over 100ms: %d changes per epoch, want %d", in, got, perEpoch)
		}
	}
	if got := (rates.ChangeRate{}).ChangesPerEpoch(rates.Cadence{Rows: 50_000}); got != 500 {
		t.Errorf("default changes of 50krows: %d per epoch, want 1 %% = 500", got)
	}
	for _, bad := range []string{"10k", "5/min", "-1/s", "x/epoch"} {
		if _, err := rates.ParseChangeRate(bad); err == nil {
			t.Errorf("ParseChangeRate(%q): no error", bad)
		}
	}
}

// TestRateLimits: the limit dimension's values, old and new, parse to what they
// say and print back to names that parse the same; limits with which a job never
// ends are refused with the reason.
func TestRateLimits(t *testing.T) {
	for _, tc := range []struct {
		in, name string
		want     rates.RateLimit
	}{
		{"none", "none", rates.RateLimit{}},
		{"200k/s", "200k-per-s", rates.RateLimit{Rate: 200_000}},
		{"200k-per-s", "200k-per-s", rates.RateLimit{Rate: 200_000}},
		{"1500/s", "1500-per-s", rates.RateLimit{Rate: 1500}},
		{"200k/s..50k/s@50%", "200k-per-s..50k-per-s@50%", rates.RateLimit{Rate: 200_000, Step: rates.RateStep{Rate: 50_000, Percent: 50}}},
		{"none..10k/s@25%", "none..10k-per-s@25%", rates.RateLimit{Step: rates.RateStep{Rate: 10_000, Percent: 25}}},
		{"0/s..100k/s@1500ms", "0-per-s..100k-per-s@1.5s", rates.RateLimit{Rate: rates.Pause, Step: rates.RateStep{Rate: 100_000, After: 1500 * time.Millisecond}}},
		{"50k/s..none@2s", "50k-per-s..none@2s", rates.RateLimit{Rate: 50_000, Step: rates.RateStep{After: 2 * time.Second}}},
	} {
		got, err := rates.ParseRateLimit(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseRateLimit(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			continue
		}
		if got.String() != tc.name {
			t.Errorf("%q prints as %q, want %q", tc.in, got.String(), tc.name)
		}
		if back, err := rates.ParseRateLimit(got.String()); err != nil || back != got {
			t.Errorf("%q does not parse back: %+v, %v", got.String(), back, err)
		}
	}
	for _, tc := range []struct{ in, why string }{
		{"0/s", "never ends"},
		{"100k/s..0/s@50%", "pauses the scan for good"},
		{"0/s..100k/s@50%", "never reaches a per cent"},
		{"100k/s..100k/s@50%", "changes nothing"},
		{"100k/s..50k/s@100%", "per cent"},
		{"100k/s..50k/s", "want snapshot rows"},
		{"100k/s@50%", "want snapshot rows"},
		{"100k/s..50k/s@soon", "per cent"},
		{"-5/s", "want snapshot rows"},
	} {
		if _, err := rates.ParseRateLimit(tc.in); err == nil || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("ParseRateLimit(%q): err %v, want one saying %q", tc.in, err, tc.why)
		}
	}
}
