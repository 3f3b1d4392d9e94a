package progress

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestBar: on a terminal the bar counts finished runs and prints failures and the
// total at the end; elsewhere every run is one log line, failures at error level.
func TestBar(t *testing.T) {
	for _, tc := range []struct {
		term       bool
		want, miss []string // in the output, not in it
	}{
		{term: true,
			want: []string{"[...", "0/2 ETA ?  a", "[###############...............] 1/2", "FAILED run 2 b: exit status 1", "2 runs in", "1 failed"},
			miss: []string{"run done"}},
		{term: false,
			want: []string{"level=INFO msg=\"run done\" run=1/2 cell=a", "level=ERROR msg=\"run failed\" run=2/2 cell=b", "reason=\"exit status 1\""},
			miss: []string{"[", "runs in"}},
	} {
		var w, log bytes.Buffer
		bar := New(&w, tc.term, slog.New(slog.NewTextHandler(&log, nil)), 2)
		bar.Start("a")
		bar.Done(1, "a", "")
		bar.Start("b")
		bar.Done(2, "b", "exit status 1")
		bar.Finish()
		out := w.String() + log.String()
		for _, s := range tc.want {
			if !strings.Contains(out, s) {
				t.Errorf("term=%v: %q not in the output:\n%s", tc.term, s, out)
			}
		}
		for _, s := range tc.miss {
			if strings.Contains(out, s) {
				t.Errorf("term=%v: %q in the output:\n%s", tc.term, s, out)
			}
		}
	}
}
