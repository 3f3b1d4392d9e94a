package stream

import (
	"fmt"

	"github.com/backfill-bench/backfill-bench/bench/row"
)

// AppendLogValue appends the change-log value of a change: its op, then the row.
func AppendLogValue(dst []byte, op Op, r row.Row) []byte {
	return row.AppendValue(append(dst, byte(op)), r)
}

// DecodeLogValue decodes a value written by AppendLogValue into a new row.
func DecodeLogValue(v []byte) (Op, row.Row, error) {
	if len(v) == 0 {
		return 0, nil, fmt.Errorf("empty change-log value")
	}
	op := Op(v[0])
	if op > UpdateInsert {
		return 0, nil, fmt.Errorf("change-log op %d unknown", v[0])
	}
	r, err := row.DecodeValue(nil, v[1:])
	return op, r, err
}
