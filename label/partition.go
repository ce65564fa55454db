package label

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"math"
	"math/bits"

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
	p.mac.Reset()
	p.mac.Write(id)
	p.sum = p.mac.Sum(p.sum[:0])
	// Lemire's multiply-shift maps 64 uniform bits onto [0, k); its bias is
	// below k/2^64, far under anything observable.
	hi, _ := bits.Mul64(binary.LittleEndian.Uint64(p.sum), uint64(p.k))
	return int(hi)
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
