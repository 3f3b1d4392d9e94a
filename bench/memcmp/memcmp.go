// Package memcmp encodes primary key tuples so that byte order equals tuple order.
//
// Each column is a kind byte (Null = 0 sorts first) followed by the value: integers
// and timestamps as 8 big-endian bytes with the sign bit flipped, floats by their
// order-preserving bits, booleans as one byte, strings with 0x00 escaped as 0x00 0xFF
// and terminated by 0x00 0x01 (so embedded zero bytes and prefixes order correctly).
// A descending column stores the complement of every byte of its encoding. Every
// column encoding is prefix-free, which is what makes complementing reverse the order
// and makes key(pos)+0x00 the smallest key after pos.
package memcmp

import (
	"encoding/binary"
	"fmt"

	"github.com/backfill-bench/backfill-bench/bench/row"
)

// AppendKey appends the encoding of the tuple pk to dst. desc gives each column's
// direction (nil: all ascending).
func AppendKey(dst []byte, pk []row.Datum, desc []bool) []byte {
	for i, d := range pk {
		start := len(dst)
		dst = AppendDatum(dst, d)
		if desc != nil && desc[i] {
			for j := start; j < len(dst); j++ {
				dst[j] = ^dst[j]
			}
		}
	}
	return dst
}

// AppendRowKey appends the encoding of r's primary key under schema s.
func AppendRowKey(dst []byte, s *row.Schema, r row.Row) []byte {
	for i, c := range s.PK {
		start := len(dst)
		dst = AppendDatum(dst, r[c])
		if s.Desc(i) {
			for j := start; j < len(dst); j++ {
				dst[j] = ^dst[j]
			}
		}
	}
	return dst
}

// AppendDatum appends the ascending encoding of one datum to dst: AppendKey of a
// one-column tuple, without its loop (for a per-row hash of a distribution key).
func AppendDatum(dst []byte, d row.Datum) []byte {
	dst = append(dst, byte(d.Kind))
	switch d.Kind {
	case row.Int64, row.Timestamp:
		dst = binary.BigEndian.AppendUint64(dst, uint64(d.I)^(1<<63))
	case row.Float64:
		dst = binary.BigEndian.AppendUint64(dst, row.FloatOrderBits(uint64(d.I)))
	case row.Bool:
		dst = append(dst, byte(d.I&1))
	case row.String:
		for i := 0; i < len(d.S); i++ {
			c := d.S[i]
			dst = append(dst, c)
			if c == 0 {
				dst = append(dst, 0xFF)
			}
		}
		dst = append(dst, 0x00, 0x01)
	}
	return dst
}

// DecodeKey decodes n columns from key, appending them to dst, and returns the rest of
// key. desc must match the directions used to encode.
func DecodeKey(dst []row.Datum, key []byte, n int, desc []bool) ([]row.Datum, []byte, error) {
	for i := 0; i < n; i++ {
		var flip byte
		if desc != nil && desc[i] {
			flip = 0xFF
		}
		var d row.Datum
		var err error
		d, key, err = decodeDatum(key, flip)
		if err != nil {
			return nil, nil, fmt.Errorf("memcmp: column %d: %w", i, err)
		}
		dst = append(dst, d)
	}
	return dst, key, nil
}

func decodeDatum(b []byte, flip byte) (row.Datum, []byte, error) {
	if len(b) == 0 {
		return row.Datum{}, nil, fmt.Errorf("truncated key")
	}
	d := row.Datum{Kind: row.Kind(b[0] ^ flip)}
	b = b[1:]
	fixed := func() (uint64, error) {
		if len(b) < 8 {
			return 0, fmt.Errorf("truncated %s", d.Kind)
		}
		v := binary.BigEndian.Uint64(b)
		if flip != 0 {
			v = ^v
		}
		b = b[8:]
		return v, nil
	}
	switch d.Kind {
	case row.Null:
	case row.Int64, row.Timestamp:
		v, err := fixed()
		if err != nil {
			return d, nil, err
		}
		d.I = int64(v ^ (1 << 63))
	case row.Float64:
		v, err := fixed()
		if err != nil {
			return d, nil, err
		}
		// Invert FloatOrderBits.
		if v&(1<<63) != 0 {
			v &^= 1 << 63
		} else {
			v = ^v
		}
		d.I = int64(v)
	case row.Bool:
		if len(b) == 0 {
			return d, nil, fmt.Errorf("truncated bool")
		}
		v := b[0] ^ flip
		if v > 1 {
			return d, nil, fmt.Errorf("bad bool byte %#x", v)
		}
		d.I, b = int64(v), b[1:]
	case row.String:
		var s []byte
		for {
			if len(b) == 0 {
				return d, nil, fmt.Errorf("unterminated string")
			}
			c := b[0] ^ flip
			if c != 0 {
				s, b = append(s, c), b[1:]
				continue
			}
			if len(b) < 2 {
				return d, nil, fmt.Errorf("truncated string escape")
			}
			switch b[1] ^ flip {
			case 0xFF:
				s, b = append(s, 0), b[2:]
				continue
			case 0x01:
				b = b[2:]
			default:
				return d, nil, fmt.Errorf("bad string escape %#x", b[1]^flip)
			}
			break
		}
		d.S = string(s)
	default:
		return d, nil, fmt.Errorf("unknown kind %d", d.Kind)
	}
	return d, b, nil
}
