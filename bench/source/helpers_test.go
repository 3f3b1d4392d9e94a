package source

import "github.com/backfill-bench/backfill-bench/bench/row"

// testTable is a minimal workload: an int64 key and a value derived from the version.
type testTable struct{}

var testSchema = row.Schema{
	Columns: []row.Column{{Name: "id", Kind: row.Int64}, {Name: "v", Kind: row.Int64}},
	PK:      []int{0},
	DistKey: []int{0},
}

func (testTable) Name() string        { return "test" }
func (testTable) Schema() *row.Schema { return &testSchema }
func (testTable) Row(dst row.Row, seed uint64, id int64, version uint32) row.Row {
	return append(dst[:0], row.I64(id), row.I64(int64(Mix64(seed^uint64(id)<<8^uint64(version)))))
}

// IDOf implements KeyIndex: the key is the id.
func (testTable) IDOf(pk []row.Datum) (int64, bool) { return pk[0].I, true }

// Stride implements KeyIndex.
func (testTable) Stride() int64 { return 1 }
