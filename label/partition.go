package label

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"math"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"

	"github.com/pate-tool/pate/label/noise"
)

// partitioner assigns privacy units to teachers with a keyed random function
// (HMAC-SHA256 under a secret key). A unit's teacher depends only on the key
// and on the unit's own identity, never on the other units: adding or
// removing one unit changes exactly one teacher's data (invariant 1), and the
// assignment is independent of every data value but the identity itself.
type partitioner struct {
	k   int
	key []byte
	mac hash.Hash
	buf []byte
	sum []byte
}

func newPartitioner(k int, src noise.Source) *partitioner {
	key := make([]byte, 32)
	for i := 0; i < 4; i++ {
		binary.LittleEndian.PutUint64(key[8*i:], src.Uint64())
	}
	return &partitioner{k: k, key: key, mac: hmac.New(sha256.New, key)}
}

// clone returns a partitioner with the same key, for another goroutine (a
// partitioner is not safe for concurrent use).
func (p *partitioner) clone() *partitioner {
	return &partitioner{k: p.k, key: p.key, mac: hmac.New(sha256.New, p.key)}
}

// teacher returns the teacher of the unit whose canonical bytes are id.
func (p *partitioner) teacher(id []byte) int {
	return teacherOfHash(p.hash(id), p.k)
}

// hash returns the keyed hash of the unit whose canonical bytes are id: 64
// uniform bits, which teacherOfHash maps onto the teachers.
func (p *partitioner) hash(id []byte) uint64 {
	p.mac.Reset()
	p.mac.Write(id)
	p.sum = p.mac.Sum(p.sum[:0])
	return binary.LittleEndian.Uint64(p.sum)
}

// rowIdentities appends to rows[r] the canonical bytes of row lo+r over
// cols, for every r: what rowIdentity appends, built a column at a time so
// that each column's type is looked at once per block of rows, not once per
// value.
func rowIdentities(rows [][]byte, cols []arrow.Array, lo int) {
	for _, c := range cols {
		switch a := c.(type) {
		case *array.Float64:
			appendFixed(rows, c, a.Float64Values(), lo, func(b []byte, v float64) []byte {
				return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
			})
		case *array.Int64:
			appendFixed(rows, c, a.Int64Values(), lo, func(b []byte, v int64) []byte {
				return binary.LittleEndian.AppendUint64(b, uint64(v))
			})
		case *array.Float32:
			appendFixed(rows, c, a.Float32Values(), lo, func(b []byte, v float32) []byte {
				return binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
			})
		case *array.Int32:
			appendFixed(rows, c, a.Int32Values(), lo, func(b []byte, v int32) []byte {
				return binary.LittleEndian.AppendUint32(b, uint32(v))
			})
		default:
			if appendFloatLists(rows, c, lo) {
				continue
			}
			one := []arrow.Array{c}
			for r, dst := range rows {
				rows[r] = rowIdentity(dst, one, lo+r)
			}
		}
	}
}

// appendFixed appends to rows[r] the identity bytes of value lo+r of the
// fixed-width column c, whose values are vals: the null marker, or the
// value marker and put's bytes.
func appendFixed[T any](rows [][]byte, c arrow.Array, vals []T, lo int, put func([]byte, T) []byte) {
	nulls := c.NullN() > 0
	for r, dst := range rows {
		if nulls && c.IsNull(lo+r) {
			rows[r] = append(dst, 0xff)
			continue
		}
		rows[r] = put(append(dst, 0x01), vals[lo+r])
	}
}

// rowIdentity appends the canonical bytes of row i over cols: each value's
// type-tagged binary form, length-prefixed where the length varies, with a
// distinct marker for nulls. Identical rows have the same identity and so
// land with the same teacher.
func rowIdentity(dst []byte, cols []arrow.Array, i int) []byte {
	for _, c := range cols {
		if c.IsNull(i) {
			dst = append(dst, 0xff)
			continue
		}
		if l, ok := c.(array.ListLike); ok {
			if out, ok := appendFloatListBits(dst, l, i); ok {
				dst = out
				continue
			}
		}
		dst = append(dst, 0x01)
		switch a := c.(type) {
		case *array.Float64:
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(a.Value(i)))
		case *array.Float32:
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(a.Value(i)))
		case *array.Int64:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(a.Value(i)))
		case *array.Int32:
			dst = binary.LittleEndian.AppendUint32(dst, uint32(a.Value(i)))
		case *array.String:
			v := a.Value(i)
			dst = binary.AppendUvarint(dst, uint64(len(v)))
			dst = append(dst, v...)
		default:
			v, _ := valueText(c, i)
			dst = binary.AppendUvarint(dst, uint64(len(v)))
			dst = append(dst, v...)
		}
	}
	return dst
}
