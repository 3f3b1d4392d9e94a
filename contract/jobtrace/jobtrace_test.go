package jobtrace_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/backfill-bench/backfill-bench/contract/jobtrace"
)

// FuzzReadTraces: whatever the bytes, reading traces ends in traces or an error
// naming the file and line.
func FuzzReadTraces(f *testing.F) {
	f.Add([]byte(`{"cell":"profile=mem","epochs":[{"epoch":2,"latency_sec":0.1,"phases_sec":{"scan":0.01}}]}` + "\n"))
	f.Add([]byte("{\n"))
	f.Add([]byte(`{"epochs":[{"latency_sec":"x"}]}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		traces, err := jobtrace.ReadTraces(bytes.NewReader(data), "t.jsonl")
		if err != nil && !strings.HasPrefix(err.Error(), "trace t.jsonl:") && !strings.Contains(err.Error(), "token too long") {
			t.Fatalf("error without the file and line: %v", err)
		}
		_ = traces
	})
}
