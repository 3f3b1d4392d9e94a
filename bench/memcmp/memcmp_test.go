package memcmp

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/backfill-bench/backfill-bench/bench/row"
)

// randDatum draws values that stress the encoding: negative and extreme integers,
// strings with zero bytes and shared prefixes, signed zeros, and NULLs.
func randDatum(r *rand.Rand, k row.Kind) row.Datum {
	if r.IntN(6) == 0 {
		return row.NullDatum
	}
	switch k {
	case row.Int64, row.Timestamp:
		v := []int64{math.MinInt64, -1, 0, 1, math.MaxInt64, r.Int64N(5) - 2, r.Int64() - r.Int64()}[r.IntN(7)]
		return row.Datum{Kind: k, I: v}
	case row.Float64:
		return row.F64([]float64{math.Inf(-1), -1.5, math.Copysign(0, -1), 0, 2.25, math.Inf(1), r.NormFloat64()}[r.IntN(7)])
	case row.Bool:
		return row.B(r.IntN(2) == 1)
	default:
		alphabet := []byte{0x00, 0x01, 'a', 'b', 0xFE, 0xFF}
		s := make([]byte, r.IntN(5))
		for i := range s {
			s[i] = alphabet[r.IntN(len(alphabet))]
		}
		return row.Str(string(s))
	}
}

func TestOrderPreservation(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	kindSets := [][]row.Kind{
		{row.Int64},
		{row.String},
		{row.String, row.Int64},
		{row.Float64, row.Bool, row.String},
		{row.Timestamp, row.String, row.String},
	}
	for _, kinds := range kindSets {
		for _, descAll := range []bool{false, true} {
			desc := make([]bool, len(kinds))
			for i := range desc {
				desc[i] = descAll && i%2 == 0 || !descAll && i == 1
			}
			s := row.Schema{PK: make([]int, len(kinds)), PKDesc: desc}
			for i, k := range kinds {
				s.Columns = append(s.Columns, row.Column{Kind: k})
				s.PK[i] = i
			}
			tuples := make([]row.Row, 400)
			for i := range tuples {
				tuples[i] = make(row.Row, len(kinds))
				for j, k := range kinds {
					tuples[i][j] = randDatum(r, k)
				}
			}
			for i := 0; i < 4000; i++ {
				a, b := tuples[r.IntN(len(tuples))], tuples[r.IntN(len(tuples))]
				want := s.ComparePK(a, b)
				got := bytes.Compare(AppendKey(nil, a, desc), AppendKey(nil, b, desc))
				if got != want {
					t.Fatalf("kinds %v desc %v: compare(%v, %v): bytes say %d, tuples say %d", kinds, desc, a, b, got, want)
				}
			}
			// Sorting by bytes and by tuple gives the same sequence.
			byTuple := slices.Clone(tuples)
			slices.SortStableFunc(byTuple, s.ComparePK)
			byBytes := slices.Clone(tuples)
			slices.SortStableFunc(byBytes, func(a, b row.Row) int {
				return bytes.Compare(AppendKey(nil, a, desc), AppendKey(nil, b, desc))
			})
			for i := range byTuple {
				if s.ComparePK(byTuple[i], byBytes[i]) != 0 {
					t.Fatalf("sorted sequences differ at %d: %v vs %v", i, byTuple[i], byBytes[i])
				}
			}
		}
	}
}

func TestSuccessorBound(t *testing.T) {
	// key(pos)+0x00 is above key(pos) and below every key after pos: the scan's
	// exclusive lower bound relies on it.
	pos := []row.Datum{row.Str("ab"), row.I64(3)}
	bound := append(AppendKey(nil, pos, nil), 0)
	for _, next := range [][]row.Datum{
		{row.Str("ab"), row.I64(4)},
		{row.Str("ab\x00"), row.NullDatum},
		{row.Str("abc"), row.I64(math.MinInt64)},
	} {
		if k := AppendKey(nil, next, nil); bytes.Compare(bound, k) >= 0 {
			t.Errorf("bound %x not below key of %v (%x)", bound, next, k)
		}
	}
	if bytes.Compare(AppendKey(nil, pos, nil), bound) >= 0 {
		t.Errorf("bound not above pos")
	}
}

func TestDecodeRoundTrip(t *testing.T) {
	tuple := []row.Datum{row.NullDatum, row.I64(-7), row.Str("a\x00b"), row.F64(-0.5), row.B(true), row.TS(1700000000000000)}
	for _, desc := range [][]bool{nil, {true, false, true, true, false, true}} {
		key := AppendKey(nil, tuple, desc)
		got, rest, err := DecodeKey(nil, append(key, 'x'), len(tuple), desc)
		if err != nil {
			t.Fatal(err)
		}
		if string(rest) != "x" {
			t.Errorf("rest = %q, want %q", rest, "x")
		}
		if !slices.Equal(got, tuple) {
			t.Errorf("desc %v: got %v, want %v", desc, got, tuple)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for name, key := range map[string][]byte{
		"empty":        {},
		"short int":    {byte(row.Int64), 1, 2},
		"unterminated": {byte(row.String), 'a'},
		"bad escape":   {byte(row.String), 0, 7},
		"bad kind":     {99},
		"bad bool":     {byte(row.Bool), 5},
	} {
		if _, _, err := DecodeKey(nil, key, 1, nil); err == nil {
			t.Errorf("%s: no error for %x", name, key)
		}
	}
}

// FuzzRoundTrip builds a tuple from fuzz input, encodes it and decodes it back.
func FuzzRoundTrip(f *testing.F) {
	f.Add(int64(-1), "a\x00", 2.5, true, uint8(0b1010))
	f.Add(int64(math.MaxInt64), "", math.Inf(-1), false, uint8(0xFF))
	f.Fuzz(func(t *testing.T, i int64, s string, fl float64, b bool, mask uint8) {
		tuple := []row.Datum{row.I64(i), row.Str(s), row.F64(fl), row.B(b), row.NullDatum}
		desc := make([]bool, len(tuple))
		for j := range desc {
			desc[j] = mask&(1<<j) != 0
		}
		key := AppendKey(nil, tuple, desc)
		got, rest, err := DecodeKey(nil, key, len(tuple), desc)
		if err != nil {
			t.Fatalf("decode %x: %v", key, err)
		}
		if len(rest) != 0 || !slices.Equal(got, tuple) {
			t.Fatalf("round trip: got %v rest %x, want %v", got, rest, tuple)
		}
	})
}

// FuzzDecode feeds arbitrary bytes to the decoder: it must return an error or a
// tuple that re-encodes to the bytes it consumed, never panic.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{byte(row.String), 'a', 0, 0xFF, 0, 1}, false)
	f.Add([]byte{byte(row.Int64), 0x80, 0, 0, 0, 0, 0, 0, 1}, true)
	f.Fuzz(func(t *testing.T, key []byte, desc bool) {
		d := []bool{desc}
		got, rest, err := DecodeKey(nil, key, 1, d)
		if err != nil {
			return
		}
		consumed := key[:len(key)-len(rest)]
		if re := AppendKey(nil, got, d); !bytes.Equal(re, consumed) {
			t.Fatalf("decode(%x) = %v, re-encodes to %x", consumed, got, re)
		}
	})
}
