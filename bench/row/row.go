// Package row defines datums, rows and table schemas, and the row value encoding.
package row

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
)

// Kind is the type of a datum.
type Kind uint8

// The datum kinds. Null sorts before every other value.
const (
	Null Kind = iota
	Int64
	Float64
	String
	Bool
	Timestamp // microseconds since the Unix epoch
)

var kindNames = [...]string{Null: "null", Int64: "int64", Float64: "float64", String: "string", Bool: "bool", Timestamp: "timestamp"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Datum is one value. Int64, Bool and Timestamp use I; Float64 stores its bits in I;
// String uses S.
type Datum struct {
	Kind Kind
	I    int64
	S    string
}

// NullDatum is the SQL NULL.
var NullDatum = Datum{}

// I64 returns an Int64 datum.
func I64(v int64) Datum { return Datum{Kind: Int64, I: v} }

// F64 returns a Float64 datum.
func F64(v float64) Datum { return Datum{Kind: Float64, I: int64(math.Float64bits(v))} }

// Str returns a String datum.
func Str(v string) Datum { return Datum{Kind: String, S: v} }

// B returns a Bool datum.
func B(v bool) Datum {
	if v {
		return Datum{Kind: Bool, I: 1}
	}
	return Datum{Kind: Bool}
}

// TS returns a Timestamp datum in microseconds since the Unix epoch.
func TS(micros int64) Datum { return Datum{Kind: Timestamp, I: micros} }

// Float returns the value of a Float64 datum.
func (d Datum) Float() float64 { return math.Float64frombits(uint64(d.I)) }

func (d Datum) String() string {
	switch d.Kind {
	case Null:
		return "NULL"
	case Int64, Timestamp:
		return strconv.FormatInt(d.I, 10)
	case Float64:
		return strconv.FormatFloat(d.Float(), 'g', -1, 64)
	case String:
		return strconv.Quote(d.S)
	case Bool:
		return strconv.FormatBool(d.I != 0)
	}
	return d.Kind.String()
}

// FloatOrderBits maps a float's bits to an unsigned integer with the same total order
// as the float (negative values below positive, -0 below +0, NaN at the ends by sign).
// The memcomparable encoding uses the same order, so the two always agree.
func FloatOrderBits(bits uint64) uint64 {
	if bits&(1<<63) != 0 {
		return ^bits
	}
	return bits | 1<<63
}

// Compare orders two datums: Null first, then by value. Datums of different non-null
// kinds order by kind, which never happens within one schema column.
func Compare(a, b Datum) int {
	if a.Kind != b.Kind {
		return cmp.Compare(a.Kind, b.Kind)
	}
	switch a.Kind {
	case Null:
		return 0
	case String:
		return cmp.Compare(a.S, b.S)
	case Float64:
		return cmp.Compare(FloatOrderBits(uint64(a.I)), FloatOrderBits(uint64(b.I)))
	default:
		return cmp.Compare(a.I, b.I)
	}
}

// Row is one tuple, one datum per schema column.
type Row []Datum

func (r Row) String() string {
	s := "("
	for i, d := range r {
		if i > 0 {
			s += ", "
		}
		s += d.String()
	}
	return s + ")"
}

// Column is a named, typed column.
type Column struct {
	Name string
	Kind Kind
}

// Schema describes a table: its columns, its primary key (column indices, each with a
// direction) and its distribution key (column indices hashed to pick a vnode).
type Schema struct {
	Columns []Column
	PK      []int
	PKDesc  []bool // per PK column; nil means all ascending
	DistKey []int
}

// Validate reports a schema that cannot be used to key a table.
func (s *Schema) Validate() error {
	if len(s.Columns) == 0 {
		return fmt.Errorf("schema has no columns")
	}
	if len(s.PK) == 0 {
		return fmt.Errorf("schema has no primary key")
	}
	if s.PKDesc != nil && len(s.PKDesc) != len(s.PK) {
		return fmt.Errorf("schema has %d primary key columns but %d directions", len(s.PK), len(s.PKDesc))
	}
	for _, set := range [][]int{s.PK, s.DistKey} {
		for _, c := range set {
			if c < 0 || c >= len(s.Columns) {
				return fmt.Errorf("schema key column %d out of range [0,%d)", c, len(s.Columns))
			}
		}
	}
	return nil
}

// Desc reports whether primary key column i (an index into PK) sorts descending.
func (s *Schema) Desc(i int) bool { return s.PKDesc != nil && s.PKDesc[i] }

// PKOf returns the primary key datums of r, appended to dst.
func (s *Schema) PKOf(dst []Datum, r Row) []Datum {
	for _, c := range s.PK {
		dst = append(dst, r[c])
	}
	return dst
}

// ComparePK orders two rows by primary key, column by column, each in its direction:
// the comparison the backfill filter uses.
func (s *Schema) ComparePK(a, b Row) int {
	for i, c := range s.PK {
		x, y := &a[c], &b[c]
		var r int
		if x.Kind == y.Kind && (x.Kind == Int64 || x.Kind == Timestamp) { // most keys: inline
			r = cmpInt(x.I, y.I)
		} else {
			r = Compare(*x, *y)
		}
		if r != 0 {
			if s.Desc(i) {
				return -r
			}
			return r
		}
	}
	return 0
}

// cmpInt is Compare of two integer datums' values.
func cmpInt(x, y int64) int {
	if x < y {
		return -1
	}
	if x > y {
		return 1
	}
	return 0
}

// CompareRowToPK orders a row's primary key against a bare key tuple (one datum per PK
// column).
func (s *Schema) CompareRowToPK(r Row, pk []Datum) int {
	for i, c := range s.PK {
		a, b := &r[c], &pk[i]
		var x int
		if a.Kind == b.Kind && (a.Kind == Int64 || a.Kind == Timestamp) { // most keys: inline
			x = cmpInt(a.I, b.I)
		} else {
			x = Compare(*a, *b)
		}
		if x != 0 {
			if s.Desc(i) {
				return -x
			}
			return x
		}
	}
	return 0
}
