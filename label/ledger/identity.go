package ledger

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
)

// ContentHash is the ledger identity of a sensitive dataset: a hash of its
// rows that does not depend on how they are stored. Each row is encoded
// canonically over every column (label columns included: which columns are
// labels is a flag of the run, not a property of the data), the columns
// taken in the order of their names, and hashed; the row hashes are added
// up (a multiset hash: the sum does not depend on the row order, and a
// repeated row counts twice). The identity is the SHA-256 of a version tag,
// the sorted column names, the row count and that sum.
//
// Canonical values: null, and an empty string, are one null marker; a
// number (any integer or floating-point type, or a string that parses as
// one, so that a CSV cell "1" and an int32 1 and a float64 1.0 agree) is an
// integer when it is integral and fits int64, else its float64 bits (a
// float32 is read through its shortest decimal form, so that float32 0.1
// and "0.1" agree); a boolean is itself; any other value is its text.
// Mapping distinct values together can only merge two datasets' ledgers,
// which over-counts and so errs on the safe side.
type ContentHash struct {
	cols  []string
	n     uint64
	lanes [4]uint64
	rows  [][]byte
}

// Add hashes the rows of rec. Every record must have the same column names.
func (h *ContentHash) Add(rec arrow.Record) error {
	schema := rec.Schema()
	order := make([]int, schema.NumFields())
	names := make([]string, len(order))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return schema.Field(order[a]).Name < schema.Field(order[b]).Name })
	for i, j := range order {
		names[i] = schema.Field(j).Name
	}
	if h.cols == nil {
		h.cols = names
	} else if !equalStrings(h.cols, names) {
		return errors.New("ledger: record batches with different columns")
	}
	n := int(rec.NumRows())
	for len(h.rows) < n {
		h.rows = append(h.rows, make([]byte, 0, 64))
	}
	rows := h.rows[:n]
	for i := range rows {
		rows[i] = rows[i][:0]
	}
	for _, j := range order {
		appendCanonical(rows, rec.Column(j))
	}
	for _, r := range rows {
		s := sha256.Sum256(r)
		for k := range h.lanes {
			h.lanes[k] += binary.LittleEndian.Uint64(s[8*k:])
		}
	}
	h.n += uint64(n)
	return nil
}

// ID returns the dataset identity, in hex.
func (h *ContentHash) ID() string {
	d := sha256.New()
	d.Write([]byte("pate-ledger-content-v2\x00"))
	for _, c := range h.cols {
		d.Write(binary.AppendUvarint(nil, uint64(len(c))))
		d.Write([]byte(c))
	}
	var b [8 * 5]byte
	binary.LittleEndian.PutUint64(b[:], h.n)
	for k, v := range h.lanes {
		binary.LittleEndian.PutUint64(b[8+8*k:], v)
	}
	d.Write(b[:])
	return hex.EncodeToString(d.Sum(nil))
}

// RecordReader is what ContentID reads.
type RecordReader interface {
	Read() (arrow.Record, error)
}

// ContentID reads r to its end and returns the ContentHash identity of its
// rows.
func ContentID(r RecordReader) (string, error) {
	var h ContentHash
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return h.ID(), nil
		}
		if err != nil {
			return "", fmt.Errorf("ledger: identifying the sensitive data: %w", err)
		}
		err = h.Add(rec)
		rec.Release()
		if err != nil {
			return "", err
		}
	}
}

// NamedID is the identity of a dataset named by the user (--dataset): runs
// that give the same name share one ledger file, whatever their bytes.
func NamedID(name string) string {
	s := sha256.Sum256([]byte("pate-ledger-name-v2\x00" + name))
	return hex.EncodeToString(s[:])
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Value tags of the canonical encoding.
const (
	tagNull  = 0x00
	tagInt   = 0x01
	tagFloat = 0x02
	tagBool  = 0x03
	tagText  = 0x04
)

// appendCanonical appends to rows[r] the canonical bytes of value r of c.
func appendCanonical(rows [][]byte, c arrow.Array) {
	nulls := c.NullN() > 0
	for r := range rows {
		if nulls && c.IsNull(r) {
			rows[r] = append(rows[r], tagNull)
			continue
		}
		rows[r] = appendValue(rows[r], c, r)
	}
}

func appendValue(dst []byte, c arrow.Array, i int) []byte {
	switch a := c.(type) {
	case *array.Int64:
		return appendInt(dst, a.Value(i))
	case *array.Int32:
		return appendInt(dst, int64(a.Value(i)))
	case *array.Int16:
		return appendInt(dst, int64(a.Value(i)))
	case *array.Int8:
		return appendInt(dst, int64(a.Value(i)))
	case *array.Uint64:
		v := a.Value(i)
		if v > math.MaxInt64 {
			return appendFloat(dst, float64(v))
		}
		return appendInt(dst, int64(v))
	case *array.Uint32:
		return appendInt(dst, int64(a.Value(i)))
	case *array.Uint16:
		return appendInt(dst, int64(a.Value(i)))
	case *array.Uint8:
		return appendInt(dst, int64(a.Value(i)))
	case *array.Float64:
		return appendFloat(dst, a.Value(i))
	case *array.Float32:
		v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(a.Value(i)), 'g', -1, 32), 64)
		return appendFloat(dst, v)
	case *array.Boolean:
		if a.Value(i) {
			return append(dst, tagBool, 1)
		}
		return append(dst, tagBool, 0)
	case *array.String:
		return appendText(dst, a.Value(i))
	case *array.LargeString:
		return appendText(dst, a.Value(i))
	case *array.Dictionary:
		return appendValue(dst, a.Dictionary(), a.GetValueIndex(i))
	default:
		return appendText(dst, c.ValueStr(i))
	}
}

func appendInt(dst []byte, v int64) []byte {
	return binary.AppendVarint(append(dst, tagInt), v)
}

func appendFloat(dst []byte, v float64) []byte {
	if v == math.Trunc(v) && v >= -(1<<63) && v < 1<<63 {
		return appendInt(dst, int64(v))
	}
	if math.IsNaN(v) {
		v = math.NaN()
	}
	return binary.LittleEndian.AppendUint64(append(dst, tagFloat), math.Float64bits(v))
}

func appendText(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, tagNull)
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return appendFloat(dst, v)
	}
	dst = binary.AppendUvarint(append(dst, tagText), uint64(len(s)))
	return append(dst, s...)
}
