package row

import (
	"encoding/binary"
	"fmt"
)

// AppendValue appends the value encoding of r to dst: per datum a kind byte, then a
// zig-zag varint (Int64, Timestamp), 8 bytes (Float64), a length-prefixed string, or a
// byte (Bool). It is compact and cheap, not ordered; keys use package memcmp.
func AppendValue(dst []byte, r Row) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(r)))
	for _, d := range r {
		dst = append(dst, byte(d.Kind))
		switch d.Kind {
		case Int64, Timestamp:
			dst = binary.AppendVarint(dst, d.I)
		case Float64:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(d.I))
		case String:
			dst = binary.AppendUvarint(dst, uint64(len(d.S)))
			dst = append(dst, d.S...)
		case Bool:
			dst = append(dst, byte(d.I))
		}
	}
	return dst
}

// DecodeValue decodes a value written by AppendValue, reusing dst's storage.
func DecodeValue(dst Row, b []byte) (Row, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, fmt.Errorf("row value: bad column count")
	}
	b = b[k:]
	dst = dst[:0]
	for i := uint64(0); i < n; i++ {
		if len(b) == 0 {
			return nil, fmt.Errorf("row value: truncated at column %d", i)
		}
		d := Datum{Kind: Kind(b[0])}
		b = b[1:]
		switch d.Kind {
		case Null:
		case Int64, Timestamp:
			v, k := binary.Varint(b)
			if k <= 0 {
				return nil, fmt.Errorf("row value: bad integer at column %d", i)
			}
			d.I, b = v, b[k:]
		case Float64:
			if len(b) < 8 {
				return nil, fmt.Errorf("row value: truncated float at column %d", i)
			}
			d.I, b = int64(binary.LittleEndian.Uint64(b)), b[8:]
		case String:
			l, k := binary.Uvarint(b)
			if k <= 0 || l > uint64(len(b)-k) {
				return nil, fmt.Errorf("row value: bad string at column %d", i)
			}
			d.S, b = string(b[k:k+int(l)]), b[k+int(l):]
		case Bool:
			if len(b) < 1 {
				return nil, fmt.Errorf("row value: truncated bool at column %d", i)
			}
			d.I, b = int64(b[0]&1), b[1:]
		default:
			return nil, fmt.Errorf("row value: unknown kind %d at column %d", d.Kind, i)
		}
		dst = append(dst, d)
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("row value: %d trailing bytes", len(b))
	}
	return dst, nil
}
