package source

import (
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/backfill-bench/backfill-bench/bench/storage"
)

func testBatch(t *testing.T) *pebble.Batch {
	db, err := pebble.Open("/db", &pebble.Options{FS: vfs.NewMem(), Logger: storage.Logger(nil)})
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	t.Cleanup(func() { b.Close(); db.Close() })
	return b
}
