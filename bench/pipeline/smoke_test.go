package pipeline

import (
	"context"
	"testing"
	"time"
)

func TestSmoke(t *testing.T) {
	for _, persist := range []bool{false, true} {
		cfg := Default()
		cfg.Rows = 50000
		cfg.Persist = persist
		cfg.BarrierInterval = 20 * time.Millisecond
		j, err := Prepare(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		res, err := j.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("persist=%v wall=%v snap=%d up=%d epochs=%d rows/s=%.0f wa=%.2f p99=%v logical=%+v fs=%v", persist, res.Wall, res.SnapshotRows, res.UpstreamRows, len(res.Epochs), res.RowsPerSec(), res.WriteAmp(), res.BarrierLatency(0.99), res.Logical, res.FS.Bytes)
		j.Close()
	}
}
