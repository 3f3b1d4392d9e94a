package crash

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// TestCrashTestNamesTheSeed: an inconsistent scenario fails the run, and the error
// gives the command that reproduces it.
func TestCrashTestNamesTheSeed(t *testing.T) {
	var out bytes.Buffer
	cfg := CampaignConfig{Points: 5, Seed: 10, Persist: []bool{true}, Scans: []string{"merged"}, Rows: 100, Stdout: &out,
		scenario: func(_ context.Context, c Config) (*Report, error) {
			if c.Seed == 12 {
				return &Report{}, errors.New("progress check: row vnode 1 pk (7) is in B but not in A")
			}
			return &Report{}, nil
		}}
	err := Campaign(context.Background(), cfg)
	if !errors.Is(err, ErrInconsistent) || !strings.Contains(err.Error(), "--seed 12 --rows 100 --scan merged --persist on") {
		t.Fatalf("err = %v, want ErrInconsistent naming seed 12", err)
	}
	if want := "scan=merged persist=on points=5 consistent=4 inconsistent=1 crashes=0"; !strings.HasPrefix(out.String(), want) {
		t.Errorf("output %q, want it to start with %q", out.String(), want)
	}
}

func TestCrashTestConsistent(t *testing.T) {
	var out bytes.Buffer
	cfg := CampaignConfig{Points: 4, Seed: 1, Persist: []bool{true, false}, Scans: []string{"merged", "per-vnode"}, Rows: 500, Stdout: &out}
	if err := Campaign(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "inconsistent=0"); n != 4 {
		t.Errorf("want 4 consistent combinations, got:\n%s", out.String())
	}
}
