package ledger

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/zeebo/xxh3"

	"github.com/pate-tool/pate/label/internal/listtext"
)

// ContentHash is the ledger identity of a sensitive dataset: a hash of its
// rows that does not depend on how they are stored. Each row is hashed over
// its canonical values in every column (label columns included: which
// columns are labels is a flag of the run, not a property of the data), the
// columns taken in the order of their names; the row hashes are added up
// lane by lane (a multiset hash: the sum does not depend on the row order,
// and a repeated row counts twice). The identity is the SHA-256 of a version
// tag, the sorted column names, the row count and that sum.
//
// The row hash is 128 bits in two lanes, each updated value by value with a
// step that is a bijection of the lane for a given value and of the value
// for a given lane (two rows that differ in one value never collide), then
// finalised; strings enter through XXH3-128. It is built a column at a time
// (the type of a column is looked at once per batch), fast enough to run
// beside every run. It is not collision-resistant against a chosen dataset,
// and need not be: a collision merges two datasets' ledgers, which
// over-counts, and a user who wants two identities for one dataset can have
// them anyway (--no-ledger, another directory): the ledger guards against
// mistakes, not against its owner.
//
// Canonical values: null, and an empty string, are one null marker; a
// boolean, or a string that reads as one (true, F, ...), is a boolean; a
// number (any integer or floating-point type, or a string that parses as
// one, so that a CSV cell "1" and an int32 1 and a float64 1.0 agree) is an
// integer when it is integral and fits int64, else its float64 bits (a
// float32 is read through its shortest decimal form, so that float32 0.1
// and "0.1" agree); a list of numbers, or a text of one in brackets, is
// its elements (see identity_list.go); any other value is its text.
// Mapping distinct values together can only merge two datasets' ledgers,
// which over-counts and so errs on the safe side.
type ContentHash struct {
	cols  []string
	n     uint64
	lanes [2]uint64
	rows  []lanes
}

// lanes is the running hash of one row.
type lanes struct{ a, b uint64 }

const (
	p1, p2, p3, p4 = 0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93
)

// put mixes one canonical value (its tag and two words; a number gives the
// same word twice) into the row's lanes.
func (l *lanes) put(tag, lo, hi uint64) {
	l.a = bits.RotateLeft64((l.a^tag)*p1^lo, 31) * p2
	l.b = bits.RotateLeft64((l.b+tag)*p3^hi, 27) * p4
}

// fmix is MurmurHash3's 64-bit finaliser.
func fmix(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
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
	if cap(h.rows) < n {
		h.rows = make([]lanes, n)
	}
	rows := h.rows[:n]
	for i := range rows {
		rows[i] = lanes{p1, p3}
	}
	for _, j := range order {
		putColumn(rows, rec.Column(j))
	}
	for _, r := range rows {
		h.addRow(r)
	}
	return nil
}

// addRow adds a row's finalised hash to the multiset sum.
func (h *ContentHash) addRow(r lanes) {
	h.lanes[0] += fmix(r.a)
	h.lanes[1] += fmix(r.b ^ fmix(r.a))
	h.n++
}

// ID returns the dataset identity, in hex.
func (h *ContentHash) ID() string {
	d := sha256.New()
	d.Write([]byte("pate-ledger-content-v2\x00"))
	for _, c := range h.cols {
		d.Write(binary.AppendUvarint(nil, uint64(len(c))))
		d.Write([]byte(c))
	}
	var b [8 * 3]byte
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

// ContentIDCSV returns the ContentHash identity of a CSV input (a header
// row, then the rows), every cell read as text: the canonical values make
// it the identity of the same rows in a typed format, and it does not
// depend on how a CSV reader infers column types, nor fail on a value that
// does not fit one (the run, not the ledger, decides what to do with it).
// A short row's missing cells are nulls, extra cells are ignored.
func ContentIDCSV(in io.Reader) (string, error) {
	return ContentIDCSVShards([]CSVShard{{Open: func() (io.ReadCloser, error) { return io.NopCloser(in), nil }}})
}

// CSVShard is one CSV file of a dataset stored as several.
type CSVShard struct {
	// Open opens the file's text (decompressed).
	Open func() (io.ReadCloser, error)
	// Keys are columns of constant value that the file's location gives
	// (hive partition keys): name, value; a nil value is null.
	Keys []CSVKey
}

// CSVKey is a column of constant value of a CSVShard.
type CSVKey struct {
	Name  string
	Value *string
}

// ContentIDCSVShards is ContentIDCSV of the rows of every shard, each read
// in turn: the identity of the same rows in one file. Every shard must
// have the same columns (in any order).
func ContentIDCSVShards(shards []CSVShard) (string, error) {
	var h ContentHash
	for i, sh := range shards {
		in, err := sh.Open()
		if err != nil {
			return "", fmt.Errorf("ledger: identifying the sensitive data: %w", err)
		}
		err = h.addCSV(in, sh.Keys, i == 0)
		in.Close()
		if err != nil {
			return "", err
		}
	}
	return h.ID(), nil
}

// addCSV adds the rows of one CSV input; first sets the columns, later
// inputs must have them.
func (h *ContentHash) addCSV(in io.Reader, keys []CSVKey, first bool) error {
	r := csv.NewReader(in)
	r.FieldsPerRecord = -1
	r.LazyQuotes = true // as the run's reader: a stray quote is data
	r.ReuseRecord = true
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return errors.New("ledger: identifying the sensitive data: a csv input without a header row")
	}
	if err != nil {
		return fmt.Errorf("ledger: identifying the sensitive data: %w", err)
	}
	header = append([]string(nil), header...)
	header[0] = strings.TrimPrefix(header[0], "\ufeff")
	for j, h := range header {
		if h == "" {
			header[j] = fmt.Sprintf("column_%d", j+1)
		}
	}
	for _, k := range keys {
		header = append(header, k.Name)
	}
	order := make([]int, len(header))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return header[order[a]] < header[order[b]] })
	cols := make([]string, len(order))
	for i, j := range order {
		cols[i] = header[j]
	}
	if first {
		h.cols = cols
	} else if !equalStrings(cols, h.cols) {
		return errors.New("ledger: identifying the sensitive data: csv shards with different columns")
	}
	nfile := len(header) - len(keys)
	var l lanes
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			// A parse error's position is a fact about the sensitive rows:
			// say only what kind of error it was.
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return fmt.Errorf("ledger: identifying the sensitive data: %w", err)
		}
		l = lanes{p1, p3}
		for _, j := range order {
			switch {
			case j >= nfile:
				if v := keys[j-nfile].Value; v != nil {
					putText(&l, *v)
				} else {
					l.put(tagNull, 0, 0)
				}
			case j < len(rec):
				putText(&l, rec[j])
			default:
				l.put(tagNull, 0, 0)
			}
		}
		h.addRow(l)
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

// putColumn mixes value r of c into rows[r], for every r, looking at the
// column's type once for the common types.
func putColumn(rows []lanes, c arrow.Array) {
	switch a := c.(type) {
	case *array.Float64:
		putEach(rows, c, a.Float64Values(), putFloat)
	case *array.Int64:
		putEach(rows, c, a.Int64Values(), putInt)
	case *array.Int32:
		putEach(rows, c, a.Int32Values(), func(l *lanes, v int32) { putInt(l, int64(v)) })
	case *array.String:
		nulls := c.NullN() > 0
		for r := range rows {
			if nulls && c.IsNull(r) {
				rows[r].put(tagNull, 0, 0)
				continue
			}
			putText(&rows[r], a.Value(r))
		}
	case *array.Float32:
		putEach(rows, c, a.Float32Values(), func(l *lanes, v float32) { putFloat(l, listtext.Float64(v)) })
	case array.ListLike:
		if !putNumListColumn(rows, c, a) {
			putValues(rows, c) // a list of text, of lists, ...: its text
		}
	default:
		putValues(rows, c)
	}
}

// putValues mixes value r of c into rows[r], for every r, through putValue.
func putValues(rows []lanes, c arrow.Array) {
	nulls := c.NullN() > 0
	for r := range rows {
		if nulls && c.IsNull(r) {
			rows[r].put(tagNull, 0, 0)
			continue
		}
		putValue(&rows[r], c, r)
	}
}

// putEach mixes each value of the fixed-width column c (vals) with put, or
// the null marker.
func putEach[T any](rows []lanes, c arrow.Array, vals []T, put func(*lanes, T)) {
	nulls := c.NullN() > 0
	for r := range rows {
		if nulls && c.IsNull(r) {
			rows[r].put(tagNull, 0, 0)
			continue
		}
		put(&rows[r], vals[r])
	}
}

func putValue(l *lanes, c arrow.Array, i int) {
	switch a := c.(type) {
	case *array.Int64:
		putInt(l, a.Value(i))
	case *array.Int32:
		putInt(l, int64(a.Value(i)))
	case *array.Int16:
		putInt(l, int64(a.Value(i)))
	case *array.Int8:
		putInt(l, int64(a.Value(i)))
	case *array.Uint64:
		putUint64(l, a.Value(i))
	case *array.Uint32:
		putInt(l, int64(a.Value(i)))
	case *array.Uint16:
		putInt(l, int64(a.Value(i)))
	case *array.Uint8:
		putInt(l, int64(a.Value(i)))
	case *array.Float64:
		putFloat(l, a.Value(i))
	case *array.Float32:
		putFloat(l, listtext.Float64(a.Value(i)))
	case *array.Boolean:
		if a.Value(i) {
			l.put(tagBool, 1, 1)
		} else {
			l.put(tagBool, 0, 0)
		}
	case *array.String:
		putText(l, a.Value(i))
	case *array.LargeString:
		putText(l, a.Value(i))
	case *array.Dictionary:
		putValue(l, a.Dictionary(), a.GetValueIndex(i))
	default:
		putText(l, c.ValueStr(i))
	}
}

func putInt(l *lanes, v int64) { l.put(tagInt, uint64(v), uint64(v)) }

// putUint64 mixes in v: an integer, or a float past int64.
func putUint64(l *lanes, v uint64) {
	if v > math.MaxInt64 {
		putFloat(l, float64(v))
		return
	}
	putInt(l, int64(v))
}

func putFloat(l *lanes, v float64) {
	if v == math.Trunc(v) && v >= -(1<<63) && v < 1<<63 {
		putInt(l, int64(v))
		return
	}
	if math.IsNaN(v) {
		v = math.NaN()
	}
	b := math.Float64bits(v)
	l.put(tagFloat, b, b)
}

func putText(l *lanes, s string) {
	if s == "" {
		l.put(tagNull, 0, 0)
		return
	}
	if len(s) < 40 && (s[0] <= '9' || s[0] == 'i' || s[0] == 'I' || s[0] == 'n' || s[0] == 'N') {
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			putFloat(l, v)
			return
		}
	}
	if len(s) >= 2 && s[0] == '[' && s[len(s)-1] == ']' && putListText(l, s) {
		return
	}
	if len(s) <= 5 { // a CSV reader may read true/false as booleans
		if v, err := strconv.ParseBool(s); err == nil {
			if v {
				l.put(tagBool, 1, 1)
			} else {
				l.put(tagBool, 0, 0)
			}
			return
		}
	}
	h := xxh3.HashString128(s)
	l.put(tagText, h.Lo, h.Hi)
}
