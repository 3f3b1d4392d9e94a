package row

import (
	"math"
	"slices"
	"testing"
)

func TestValueRoundTrip(t *testing.T) {
	rows := []Row{
		{},
		{NullDatum},
		{I64(math.MinInt64), I64(math.MaxInt64), F64(-0.0), Str(""), Str("a\x00b"), B(true), B(false), TS(-1)},
	}
	for _, r := range rows {
		got, err := DecodeValue(nil, AppendValue(nil, r))
		if err != nil {
			t.Fatalf("%v: %v", r, err)
		}
		if !slices.Equal(got, r) {
			t.Errorf("got %v, want %v", got, r)
		}
	}
}

func TestDecodeValueErrors(t *testing.T) {
	good := AppendValue(nil, Row{I64(5), Str("hello")})
	for i := 0; i < len(good); i++ {
		if _, err := DecodeValue(nil, good[:i]); err == nil {
			t.Errorf("truncated to %d bytes: no error", i)
		}
	}
	if _, err := DecodeValue(nil, append(good, 0)); err == nil {
		t.Error("trailing byte: no error")
	}
}

func TestComparePK(t *testing.T) {
	s := Schema{Columns: []Column{{"a", Int64}, {"b", String}}, PK: []int{1, 0}, PKDesc: []bool{false, true}}
	tests := []struct {
		a, b Row
		want int
	}{
		{Row{I64(1), Str("x")}, Row{I64(1), Str("x")}, 0},
		{Row{I64(1), Str("a")}, Row{I64(0), Str("b")}, -1},
		{Row{I64(2), Str("a")}, Row{I64(1), Str("a")}, -1}, // b descending
		{Row{NullDatum, Str("a")}, Row{I64(1), Str("a")}, 1},
		{Row{I64(0), NullDatum}, Row{I64(0), Str("")}, -1},
	}
	for _, tt := range tests {
		if got := s.ComparePK(tt.a, tt.b); got != tt.want {
			t.Errorf("ComparePK(%v, %v) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := s.CompareRowToPK(tt.a, s.PKOf(nil, tt.b)); got != tt.want {
			t.Errorf("CompareRowToPK(%v, %v) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestValidate(t *testing.T) {
	cols := []Column{{"a", Int64}}
	for name, s := range map[string]Schema{
		"no columns":    {PK: []int{0}},
		"no pk":         {Columns: cols},
		"pk range":      {Columns: cols, PK: []int{1}},
		"dist range":    {Columns: cols, PK: []int{0}, DistKey: []int{-1}},
		"desc mismatch": {Columns: cols, PK: []int{0}, PKDesc: []bool{true, false}},
	} {
		if err := s.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	ok := Schema{Columns: cols, PK: []int{0}, DistKey: []int{0}}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid schema: %v", err)
	}
}
