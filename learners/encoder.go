package learners

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
)

// ErrSchemaMismatch reports a record batch or schema whose feature columns do
// not match the ones an Encoder was fitted on (a column is missing or has an
// incompatible type).
var ErrSchemaMismatch = errors.New("learners: schema does not match the encoder")

// Kind is the family of Arrow types a feature column belongs to.
type Kind string

// The kinds of feature columns an Encoder accepts.
const (
	KindNumeric Kind = "numeric" // every integer and floating-point type
	KindString  Kind = "string"  // utf8, large_utf8 and dictionaries of them
	KindBool    Kind = "bool"    // boolean
	// KindVector is a column of fixed- or variable-size lists of numbers
	// (an embedding): each element is a numeric feature of its own.
	KindVector Kind = "vector"
	// KindListMissing is the one missing-indicator column of a list column
	// (after its elements): 1 for a row whose list is null, shorter than
	// the encoded width, or holds a null or NaN element.
	KindListMissing Kind = "list-missing"
)

// MaxVectorWidth is the most elements a list column may be encoded with.
const MaxVectorWidth = 1 << 16

// Defaults of EncoderOptions.
const (
	DefaultTopK          = 32
	DefaultMaxSampleRows = 100000
)

// EncoderOptions tunes FitEncoder. Zero values select the defaults.
type EncoderOptions struct {
	// TopK is the vocabulary size per string column (default 32).
	TopK int
	// MaxSampleRows is the number of leading rows used to fit (default 100000).
	MaxSampleRows int
}

// Feature is the fitted encoding of one feature column. Its fields are
// exported so that an Encoder can be stored as JSON and restored.
type Feature struct {
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// Column and Elem, for an element of a list column: the column's name
	// and the element's index (Name is then "column[elem]", Kind numeric);
	// for its missing indicator, Elem is −1 and ListWidth the elements
	// encoded (Name "column=<missing>", Kind list-missing).
	Column    string `json:"column,omitempty"`
	Elem      int    `json:"elem,omitempty"`
	ListWidth int    `json:"list_width,omitempty"`
	// Type is the Arrow type the encoder was fitted on (for error messages).
	Type string `json:"type"`
	// Offset is the index of the feature's first encoded column; Width the
	// number of encoded columns.
	Offset int `json:"offset"`
	Width  int `json:"width"`

	// Numeric: the sample's mean and (population) standard deviation of the
	// finite values, their minimum and maximum (every value is clamped to
	// them before it is scaled), and
	// whether a missing-indicator column follows the value column.
	Mean    float64 `json:"mean,omitempty"`
	Std     float64 `json:"std,omitempty"`
	Min     float64 `json:"min,omitempty"`
	Max     float64 `json:"max,omitempty"`
	Missing bool    `json:"missing,omitempty"`

	// String: the vocabulary, most frequent first; the encoded columns are
	// one per value, then "other", then "missing".
	Vocab []string `json:"vocab,omitempty"`

	index map[string]int32
}

// Encoder turns the feature columns of record batches into dense rows. It is
// fitted on public data only (privacy invariant 2), is immutable afterwards
// and safe for concurrent use. Its exported fields make it serialisable with
// encoding/json.
//
// Encoding, per feature column in order:
//   - numeric: (x − mean)/std; null and NaN become the mean (0) and, when the
//     fitting sample had any null or NaN, a missing-indicator column follows;
//     every other value, ±Inf and huge finite ones alike, is first clamped to
//     the sample's [min, max] (the public range), so that no value can
//     overflow or reach a model unbounded; a constant column has std 1 (see
//     Feature.bound for statistics that overflowed);
//   - string: one-hot over the TopK most frequent sample values (ties broken
//     by value), then an "other" column and a "missing" column (null);
//   - bool: 0/1, then a missing-indicator column (null → 0, indicator 1);
//   - list of numbers (fixed_size_list, list, large_list; an embedding):
//     each element i is the numeric feature "col[i]", encoded as above but
//     with no missing indicator of its own: a missing element (a null list,
//     a null or NaN element, past a shorter list's end) becomes its mean
//     (0), and when the fitting sample had any, one indicator column
//     "col=<missing>" follows the elements, 1 for such a row. A
//     fixed_size_list has the width its type says; a list the longest
//     length in the fitting sample (elements past the width are ignored).
//
// Numbers in other units: date32/date64 are days since 1970-01-01,
// timestamps seconds since the Unix epoch (UTC, whatever the unit and
// zone), time32/time64 seconds since midnight, durations seconds, decimals
// their value as float64. binary, large_binary and the view types are
// strings (categorical), as are dictionaries of any of them.
type Encoder struct {
	Columns []Feature `json:"columns"`
	Width   int       `json:"dim"`
}

// FitEncoder fits an encoder for the named feature columns of schema on the
// leading rows of batches (at most opts.MaxSampleRows), which must be public
// data. A feature whose type is not numeric, string or boolean is an error
// naming the column and its type.
func FitEncoder(schema *arrow.Schema, features []string, batches []arrow.Record, opts EncoderOptions) (*Encoder, error) {
	if len(features) == 0 {
		return nil, errors.New("learners: no feature columns to encode")
	}
	if opts.TopK <= 0 {
		opts.TopK = DefaultTopK
	}
	if opts.MaxSampleRows <= 0 {
		opts.MaxSampleRows = DefaultMaxSampleRows
	}
	columns, err := featureColumns(schema, features, batches, opts)
	if err != nil {
		return nil, err
	}
	stats, err := gatherStats(columns, batches, opts.MaxSampleRows)
	if err != nil {
		return nil, err
	}
	enc := &Encoder{}
	enc.Columns, stats = keepListIndicators(columns, stats)

	off := 0
	for i := range enc.Columns {
		f := &enc.Columns[i]
		s := &stats[i]
		f.Offset = off
		f.fit(s, opts.TopK)
		off += f.Width
	}
	enc.Width = off
	enc.init()
	return enc, nil
}

// featureColumns lists the encoder's features for the named columns: one
// each, or for a list column one per element and its missing indicator.
func featureColumns(schema *arrow.Schema, features []string, batches []arrow.Record, opts EncoderOptions) ([]Feature, error) {
	out := make([]Feature, 0, len(features))
	seen := make(map[string]bool, len(features))
	for _, name := range features {
		if seen[name] {
			return nil, fmt.Errorf("learners: feature column %q listed twice", name)
		}
		seen[name] = true
		idx := schema.FieldIndices(name)
		if len(idx) == 0 {
			return nil, fmt.Errorf("learners: feature column %q is not in the schema: %w", name, ErrSchemaMismatch)
		}
		typ := schema.Field(idx[0]).Type
		kind, err := kindOf(typ)
		if err != nil {
			return nil, fmt.Errorf("learners: feature column %q: %w", name, err)
		}
		if kind != KindVector {
			out = append(out, Feature{Name: name, Kind: kind, Type: typ.String()})
			continue
		}
		width, err := vectorWidth(typ, name, batches, opts.MaxSampleRows)
		if err != nil {
			return nil, fmt.Errorf("learners: feature column %q: %w", name, err)
		}
		for j := 0; j < width; j++ {
			out = append(out, Feature{Name: fmt.Sprintf("%s[%d]", name, j), Kind: KindNumeric, Type: typ.String(), Column: name, Elem: j})
		}
		// Kept below if the sample had a missing element.
		out = append(out, Feature{Name: name + "=<missing>", Kind: KindListMissing, Type: typ.String(), Column: name, Elem: -1, ListWidth: width})
	}
	return out, nil
}

// gatherStats gathers the columns' statistics over at most maxRows rows of
// the sample.
func gatherStats(columns []Feature, batches []arrow.Record, maxRows int) ([]fitStats, error) {
	stats := make([]fitStats, len(columns))
	for i := range stats {
		stats[i] = fitStats{min: math.Inf(1), max: math.Inf(-1), counts: map[string]int{}}
	}
	left := maxRows
	for bi, rec := range batches {
		if left <= 0 {
			break
		}
		n := min(int(rec.NumRows()), left)
		left -= n
		skip := 0
		for i := range columns {
			if skip > 0 {
				skip-- // fitted with element 0 by addList
				continue
			}
			f := &columns[i]
			if f.Kind == KindListMissing {
				continue // from its elements' statistics
			}
			col, err := column(rec, f)
			if err != nil {
				return nil, fmt.Errorf("learners: fitting batch %d: %w", bi, err)
			}
			if f.Column != "" {
				if k := elemRun(columns[i:]); k > 1 && addList(stats[i:i+k], col, n) {
					skip = k - 1
					continue
				}
				stats[i].addElem(col, f.Elem, n)
				continue
			}
			if err := stats[i].add(col, n); err != nil {
				return nil, fmt.Errorf("learners: fitting column %q: %w", f.Name, err)
			}
		}
	}
	return stats, nil
}

// keepListIndicators drops a list's missing indicator unless one of its
// elements was missing in the sample.
func keepListIndicators(columns []Feature, stats []fitStats) ([]Feature, []fitStats) {
	kept := columns[:0]
	keptStats := stats[:0]
	listMissing := false
	for i, f := range columns {
		switch {
		case f.Kind == KindListMissing:
			if !listMissing {
				continue
			}
		case f.Column != "" && f.Elem == 0:
			listMissing = stats[i].missing > 0
		case f.Column != "":
			listMissing = listMissing || stats[i].missing > 0
		}
		kept = append(kept, f)
		keptStats = append(keptStats, stats[i])
	}
	return kept, keptStats
}

// fit sets the feature's scaling, range, vocabulary and width from its
// sample statistics.
func (f *Feature) fit(s *fitStats, topK int) {
	switch f.Kind {
	case KindNumeric:
		if s.n > 0 {
			f.Mean = s.mean
			f.Std = math.Sqrt(s.m2 / float64(s.n))
			f.Min, f.Max = s.min, s.max
		}
		f.bound()
		f.Missing = s.missing > 0 && f.Column == "" // a list's: its indicator
		f.Width = 1
		if f.Missing {
			f.Width = 2
		}
	case KindListMissing:
		f.Width = 1
	case KindString:
		vals := make([]string, 0, len(s.counts))
		for v := range s.counts {
			vals = append(vals, v)
		}
		sort.Slice(vals, func(a, b int) bool {
			ca, cb := s.counts[vals[a]], s.counts[vals[b]]
			if ca != cb {
				return ca > cb
			}
			return vals[a] < vals[b]
		})
		if len(vals) > topK {
			vals = vals[:topK]
		}
		f.Vocab = vals
		f.Width = len(vals) + 2
	case KindBool:
		f.Width = 2
	}
}

func (e *Encoder) init() {
	for i := range e.Columns {
		f := &e.Columns[i]
		if f.Kind != KindString {
			continue
		}
		f.index = make(map[string]int32, len(f.Vocab))
		for j, v := range f.Vocab {
			f.index[v] = int32(j)
		}
	}
}

// UnmarshalJSON restores an encoder stored with encoding/json.
func (e *Encoder) UnmarshalJSON(b []byte) error {
	type plain Encoder
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	w := 0
	for _, f := range p.Columns {
		if f.Offset != w || f.Width <= 0 {
			return fmt.Errorf("learners: stored encoder column %q has offset %d width %d, want offset %d", f.Name, f.Offset, f.Width, w)
		}
		w += f.Width
	}
	if w != p.Width {
		return fmt.Errorf("learners: stored encoder has width %d, its columns %d", p.Width, w)
	}
	for i := range p.Columns {
		if p.Columns[i].Kind == KindNumeric {
			p.Columns[i].bound()
		}
	}
	*e = Encoder(p)
	e.init()
	return nil
}

type fitStats struct {
	n        int // finite numeric values
	mean, m2 float64
	min, max float64
	missing  int
	counts   map[string]int
}

// addNum adds one value (missing when not valid or NaN; ±Inf only bound the
// clipping, see Feature). The bounds are math.Min's and math.Max's, ±0
// included, written as comparisons: v is finite here and the bounds never
// NaN, and math.Min and math.Max are calls that were a fifth of fitting a
// 384-value embedding.
func (s *fitStats) addNum(v float64, valid bool) {
	if !valid || v != v {
		s.missing++
		return
	}
	if v-v != 0 { // ±Inf
		return
	}
	s.n++
	d := v - s.mean
	s.mean += d / float64(s.n)
	s.m2 += d * (v - s.mean)
	if v < s.min || v == 0 && s.min == 0 && math.Signbit(v) {
		s.min = v
	}
	if v > s.max || v == 0 && s.max == 0 && !math.Signbit(v) {
		s.max = v
	}
}

func (s *fitStats) add(col arrow.Array, n int) error {
	switch a := col.(type) {
	case *array.String:
		for i := 0; i < n; i++ {
			if a.IsValid(i) {
				s.counts[a.Value(i)]++
			}
		}
	case *array.LargeString:
		for i := 0; i < n; i++ {
			if a.IsValid(i) {
				s.counts[a.Value(i)]++
			}
		}
	case *array.Dictionary:
		dict := a.Dictionary()
		for i := 0; i < n; i++ {
			if a.IsNull(i) {
				continue
			}
			j := a.GetValueIndex(i)
			if dict.IsNull(j) {
				continue
			}
			s.counts[dictString(dict, j)]++
		}
	case *array.StringView, *array.Binary, *array.LargeBinary, *array.BinaryView:
		for i := 0; i < n; i++ {
			if col.IsValid(i) {
				v, _ := stringAt(col, i)
				s.counts[v]++
			}
		}
	case *array.Boolean:
	case *array.Float64:
		if a.NullN() == 0 {
			s.addFloats(a.Float64Values()[:n])
			return nil
		}
		for i := 0; i < n; i++ {
			s.addNum(a.Value(i), a.IsValid(i))
		}
	default:
		for i := 0; i < n; i++ {
			v, ok := numericAt(col, i)
			s.addNum(v, ok)
		}
	}
	return nil
}

// addFloats adds a batch of non-null values: the batch's mean and sum of
// squared deviations in two tight passes, merged into the running figures
// with Chan et al.'s formula (the same result as addNum value by value, up to
// rounding, without a division per value).
func (s *fitStats) addFloats(vs []float64) {
	var sum float64
	n := 0
	mn, mx := s.min, s.max
	for _, v := range vs {
		if v-v != 0 { // NaN or ±Inf
			if v != v {
				s.missing++
			}
			continue
		}
		sum += v
		n++
		if v < mn {
			mn = v
		}
		if v > mx {
			mx = v
		}
	}
	if n == 0 {
		return
	}
	mean := sum / float64(n)
	var m2 float64
	for _, v := range vs {
		if v-v == 0 {
			d := v - mean
			m2 += d * d
		}
	}
	total := s.n + n
	delta := mean - s.mean
	s.mean += delta * float64(n) / float64(total)
	s.m2 += m2 + delta*delta*float64(s.n)*float64(n)/float64(total)
	s.n = total
	s.min, s.max = mn, mx
}

func dictString(dict arrow.Array, j int) string {
	s, _ := stringAt(dict, j)
	return s
}

// stringAt returns element j of a string-kind array (not a dictionary),
// and false when the array is of no string kind.
func stringAt(a arrow.Array, j int) (string, bool) {
	switch d := a.(type) {
	case *array.String:
		return d.Value(j), true
	case *array.LargeString:
		return d.Value(j), true
	case *array.StringView:
		return d.Value(j), true
	case *array.Binary:
		return d.ValueString(j), true
	case *array.LargeBinary:
		return d.ValueString(j), true
	case *array.BinaryView:
		return d.ValueString(j), true
	}
	return "", false
}

// numericAt reads element i of a numeric array as float64 (fitting only; the
// hot path uses typed loops).
func numericAt(col arrow.Array, i int) (float64, bool) {
	if col.IsNull(i) {
		return 0, false
	}
	switch a := col.(type) {
	case *array.Int8:
		return float64(a.Value(i)), true
	case *array.Int16:
		return float64(a.Value(i)), true
	case *array.Int32:
		return float64(a.Value(i)), true
	case *array.Int64:
		return float64(a.Value(i)), true
	case *array.Uint8:
		return float64(a.Value(i)), true
	case *array.Uint16:
		return float64(a.Value(i)), true
	case *array.Uint32:
		return float64(a.Value(i)), true
	case *array.Uint64:
		return float64(a.Value(i)), true
	case *array.Float16:
		return float64(a.Value(i).Float32()), true
	case *array.Float32:
		return float64(a.Value(i)), true
	case *array.Float64:
		return a.Value(i), true
	case *array.Date32:
		return float64(a.Value(i)), true
	case *array.Date64:
		return float64(a.Value(i)) / 86400e3, true
	case *array.Timestamp:
		return float64(a.Value(i)) / unitsPerSecond(a.DataType().(*arrow.TimestampType).Unit), true
	case *array.Time32:
		return float64(a.Value(i)) / unitsPerSecond(a.DataType().(*arrow.Time32Type).Unit), true
	case *array.Time64:
		return float64(a.Value(i)) / unitsPerSecond(a.DataType().(*arrow.Time64Type).Unit), true
	case *array.Duration:
		return float64(a.Value(i)) / unitsPerSecond(a.DataType().(*arrow.DurationType).Unit), true
	case *array.Decimal128:
		return a.Value(i).ToFloat64(a.DataType().(*arrow.Decimal128Type).Scale), true
	case *array.Decimal256:
		return a.Value(i).ToFloat64(a.DataType().(*arrow.Decimal256Type).Scale), true
	}
	return 0, false
}

func unitsPerSecond(u arrow.TimeUnit) float64 {
	switch u {
	case arrow.Millisecond:
		return 1e3
	case arrow.Microsecond:
		return 1e6
	case arrow.Nanosecond:
		return 1e9
	}
	return 1
}

// KindOf classifies an Arrow type as a feature column, or reports it
// unsupported.
func KindOf(t arrow.DataType) (Kind, error) { return kindOf(t) }

// kindOf classifies an Arrow type, or reports it unsupported.
func kindOf(t arrow.DataType) (Kind, error) {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64,
		arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64,
		arrow.DURATION, arrow.DECIMAL128, arrow.DECIMAL256:
		return KindNumeric, nil
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW,
		arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return KindString, nil
	case arrow.BOOL:
		return KindBool, nil
	case arrow.DICTIONARY:
		dt := t.(*arrow.DictionaryType)
		if k, err := kindOf(dt.ValueType); err == nil && k == KindString {
			return KindString, nil
		}
	case arrow.FIXED_SIZE_LIST, arrow.LIST, arrow.LARGE_LIST:
		elem := t.(arrow.ListLikeType).Elem()
		if k, err := kindOf(elem); err == nil && k == KindNumeric {
			return KindVector, nil
		}
	}
	return "", fmt.Errorf("unsupported type %s (want a numeric, date, time, decimal, string, dictionary-of-string, boolean or list-of-numbers column)", t)
}

// column finds f's column in rec by name and checks its kind.
func column(rec arrow.Record, f *Feature) (arrow.Array, error) {
	name, want := f.Name, f.Kind
	if f.Column != "" {
		name, want = f.Column, KindVector
	}
	idx := rec.Schema().FieldIndices(name)
	if len(idx) == 0 {
		return nil, fmt.Errorf("feature column %q is missing: %w", name, ErrSchemaMismatch)
	}
	col := rec.Column(idx[0])
	k, err := kindOf(col.DataType())
	if err != nil || k != want {
		return nil, fmt.Errorf("feature column %q has type %s, the encoder was fitted on %s: %w", name, col.DataType(), f.Type, ErrSchemaMismatch)
	}
	return col, nil
}

// Dim returns the number of encoded columns.
func (e *Encoder) Dim() int { return e.Width }

// Features returns the names of the feature columns, in encoding order.
func (e *Encoder) Features() []string {
	out := make([]string, 0, len(e.Columns))
	for _, f := range e.Columns {
		name := f.Name
		if f.Column != "" {
			if f.Elem != 0 {
				continue
			}
			name = f.Column
		}
		out = append(out, name)
	}
	return out
}

// FeatureNames returns the names of the Dim() encoded columns: "age",
// "age=<missing>", "sex=Male", "sex=<other>", "sex=<missing>", "emb[0]",
// "emb[1]", ...
func (e *Encoder) FeatureNames() []string {
	out := make([]string, 0, e.Width)
	for _, f := range e.Columns {
		switch f.Kind {
		case KindNumeric:
			out = append(out, f.Name)
			if f.Missing {
				out = append(out, f.Name+"=<missing>")
			}
		case KindString:
			for _, v := range f.Vocab {
				out = append(out, f.Name+"="+v)
			}
			out = append(out, f.Name+"=<other>", f.Name+"=<missing>")
		case KindBool:
			out = append(out, f.Name, f.Name+"=<missing>")
		case KindListMissing:
			out = append(out, f.Name)
		}
	}
	return out
}

// CheckSchema reports, wrapping ErrSchemaMismatch, the first feature column
// that schema lacks or holds with an incompatible type (numeric and numeric,
// string and string, bool and bool are compatible).
func (e *Encoder) CheckSchema(schema *arrow.Schema) error {
	for i := range e.Columns {
		f := &e.Columns[i]
		name, want := f.Name, f.Kind
		if f.Column != "" {
			name, want = f.Column, KindVector
		}
		idx := schema.FieldIndices(name)
		if len(idx) == 0 {
			return fmt.Errorf("learners: feature column %q is missing: %w", name, ErrSchemaMismatch)
		}
		t := schema.Field(idx[0]).Type
		if k, err := kindOf(t); err != nil || k != want {
			return fmt.Errorf("learners: feature column %q has type %s, the encoder was fitted on %s: %w", name, t, f.Type, ErrSchemaMismatch)
		}
	}
	return nil
}

// Encode writes the encoded feature columns of rec into dst, which is reset
// to rec.NumRows() rows of Dim() columns. Columns are looked up by name, in
// any order; other columns are ignored. It allocates nothing per row.
func (e *Encoder) Encode(rec arrow.Record, dst *Matrix) error {
	p, err := e.Prepare(rec)
	if err != nil {
		return err
	}
	p.EncodeRows(0, p.Rows(), dst)
	return nil
}

// Prepared is a record batch made ready for encoding: its feature columns
// found and checked, and the dictionaries of dictionary-encoded string
// columns mapped onto the vocabulary once. EncodeRows may be called
// concurrently on different destinations, so that goroutines can encode
// (and use) parts of one batch each while they are in the cache.
type Prepared struct {
	e     *Encoder
	rows  int
	cols  []arrow.Array
	dict  [][]int32    // per feature: dictionary index → bucket, for dictionary columns
	lists []*listScale // per feature: at the first element of a run of list features
}

// Prepare finds and checks rec's feature columns. The returned Prepared
// refers to rec's columns and is valid while rec is.
func (e *Encoder) Prepare(rec arrow.Record) (*Prepared, error) {
	p := &Prepared{e: e, rows: int(rec.NumRows()), cols: make([]arrow.Array, len(e.Columns))}
	for i := range e.Columns {
		f := &e.Columns[i]
		col, err := column(rec, f)
		if err != nil {
			return nil, fmt.Errorf("learners: %w", err)
		}
		p.cols[i] = col
		// A slice's null count is computed, and stored, on first use:
		// do it here, before goroutines share the column.
		col.NullN()
		if a, ok := col.(*array.Dictionary); ok && f.Kind == KindString {
			if p.dict == nil {
				p.dict = make([][]int32, len(e.Columns))
			}
			p.dict[i] = dictBuckets(a.Dictionary(), f)
		}
		if f.Column != "" && f.Elem == 0 {
			if n := listRun(e.Columns[i:]); n > 1 {
				if p.lists == nil {
					p.lists = make([]*listScale, len(e.Columns))
				}
				p.lists[i] = newListScale(e.Columns[i : i+n])
			}
		}
	}
	return p, nil
}

// Rows returns the number of rows of the prepared batch.
func (p *Prepared) Rows() int { return p.rows }

// EncodeRows writes the encoded rows [lo, hi) of the batch into dst, which
// is reset to hi−lo rows of Dim() columns.
func (p *Prepared) EncodeRows(lo, hi int, dst *Matrix) {
	dst.Cols = p.e.Width
	dst.Reset(hi - lo)
	clear(dst.Data)
	p.encode(lo, tile{d: dst.Data, rows: hi - lo, rs: p.e.Width, cs: 1})
}

// EncodeColumns writes the encoded rows [lo, hi) of the batch into dst
// column-major: encoded column j of row lo+r at dst[j*ld + r], ld >= hi−lo.
// dst needs (Dim()−1)·ld + hi−lo values; the gaps between columns are left
// as they are. Each column is read and written sequentially, which suits
// tiles of a few hundred rows (see kernel.Linear.VotesColumns).
func (p *Prepared) EncodeColumns(lo, hi int, dst []float32, ld int) {
	n := hi - lo
	if n <= 0 {
		return
	}
	for j := 0; j < p.e.Width; j++ {
		clear(dst[j*ld : j*ld+n])
	}
	p.encode(lo, tile{d: dst, rows: n, rs: 1, cs: ld})
}

// tile is where encoded rows go: value (r, c) at d[r*rs + c*cs], for rows
// r < rows.
type tile struct {
	d      []float32
	rows   int
	rs, cs int
}

// at returns the index of (r, c).
func (t tile) at(r, c int) int { return r*t.rs + c*t.cs }

// encode writes rows lo … lo+t.rows−1 into t, which holds zeros.
func (p *Prepared) encode(lo int, t tile) {
	if t.rows <= 0 {
		return
	}
	for i := 0; i < len(p.e.Columns); i++ {
		f, col := &p.e.Columns[i], p.cols[i]
		if f.Column != "" {
			if f.Kind == KindListMissing {
				encodeListMissing(col, lo, f, t)
				continue
			}
			// A run of list elements (made by Prepare) is encoded in one
			// sweep of each row; the loop then goes on after it.
			if p.lists != nil && p.lists[i] != nil {
				n := len(p.lists[i].off)
				if encodeList(col, lo, p.e.Columns[i:i+n], p.lists[i], t) {
					i += n - 1
					continue
				}
			}
			encodeElem(col, lo, f, t)
			continue
		}
		switch f.Kind {
		case KindNumeric:
			encodeNumeric(col, lo, f, t)
		case KindString:
			var m []int32
			if p.dict != nil {
				m = p.dict[i]
			}
			encodeString(col, lo, m, f, t)
		case KindBool:
			a := col.(*array.Boolean)
			for r := 0; r < t.rows; r++ {
				switch {
				case a.IsNull(lo + r):
					t.d[t.at(r, f.Offset+1)] = 1
				case a.Value(lo + r):
					t.d[t.at(r, f.Offset)] = 1
				}
			}
		}
	}
}

type number interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// encodeNumeric encodes rows lo… of col into the t.rows rows of t.
func encodeNumeric(col arrow.Array, lo int, f *Feature, t tile) {
	switch a := col.(type) {
	case *array.Int8:
		encodeNum(a.Int8Values(), col, lo, f, t)
	case *array.Int16:
		encodeNum(a.Int16Values(), col, lo, f, t)
	case *array.Int32:
		encodeNum(a.Int32Values(), col, lo, f, t)
	case *array.Int64:
		encodeNum(a.Int64Values(), col, lo, f, t)
	case *array.Uint8:
		encodeNum(a.Uint8Values(), col, lo, f, t)
	case *array.Uint16:
		encodeNum(a.Uint16Values(), col, lo, f, t)
	case *array.Uint32:
		encodeNum(a.Uint32Values(), col, lo, f, t)
	case *array.Uint64:
		encodeNum(a.Uint64Values(), col, lo, f, t)
	case *array.Float32:
		encodeNum(a.Float32Values(), col, lo, f, t)
	case *array.Float64:
		encodeNum(a.Float64Values(), col, lo, f, t)
	default: // float16, dates, times, decimals: value by value
		for r := 0; r < t.rows; r++ {
			v, ok := numericAt(col, lo+r)
			val, miss := f.scale(v, ok)
			t.d[t.at(r, f.Offset)] = val
			if f.Missing {
				t.d[t.at(r, f.Offset+1)] = miss
			}
		}
	}
}

// maxScaled bounds the magnitude of an encoded numeric value, |x − mean|/std
// for x in the public range [Min, Max]: a fitted standard deviation bounds it
// by √(rows) (about 316 for the default sample), so the bound only bites when
// the statistics themselves overflowed (a public column of values near
// ±MaxFloat64); it keeps every encoded value, its square and a row's squared
// norm finite in float32 and float64.
const maxScaled = 1e9

// bound makes a numeric feature's statistics safe to encode with: a finite
// range Min ≤ Max (else [0, 0]), a finite mean within it (else its
// midpoint), and a finite standard deviation > 0 (else 1) large enough that
// every value of the range encodes within ±maxScaled. Whatever a value is,
// clamped to [Min, Max] it then encodes as a finite float32 (privacy
// invariant 8: one row's contribution is bounded whatever its values).
// Fitting calls it, and so does restoring a stored encoder.
func (f *Feature) bound() {
	if !finite(f.Min) || !finite(f.Max) || f.Min > f.Max {
		f.Min, f.Max = 0, 0
	}
	if !finite(f.Mean) || f.Mean < f.Min || f.Mean > f.Max {
		f.Mean = f.Min/2 + f.Max/2
	}
	if !(f.Std > 0) || !finite(f.Std) {
		f.Std = 1
	}
	// The largest distance to the mean, in standard deviations, computed
	// so that it cannot overflow (Max − Min may exceed MaxFloat64).
	ext := math.Max(f.Max/f.Std-f.Mean/f.Std, f.Mean/f.Std-f.Min/f.Std)
	if ext > maxScaled {
		f.Std *= ext / maxScaled
		if !finite(f.Std) {
			f.Std = math.MaxFloat64
		}
	}
}

// clamp returns v within [lo, hi], for v not NaN: a value outside the
// public range (±Inf included) encodes as the range's end. Two comparisons,
// not math.Min and math.Max, which are calls that also order NaN and ±0.
func clamp(v, lo, hi float64) float64 {
	if v > hi {
		return hi
	}
	if v < lo {
		return lo
	}
	return v
}

// scale returns the encoded value and missing indicator of one numeric
// value: missing for null and NaN, else clamped to the public range and
// standardised.
func (f *Feature) scale(v float64, valid bool) (float32, float32) {
	if !valid || math.IsNaN(v) {
		return 0, 1
	}
	return float32((clamp(v, f.Min, f.Max) - f.Mean) / f.Std), 0
}

func encodeNum[T number](vals []T, col arrow.Array, lo int, f *Feature, t tile) {
	d, rs := t.d, t.rs
	at, miss := t.at(0, f.Offset), t.at(0, f.Offset+1) // row 0's cells
	mean, inv, vlo, vhi := f.Mean, 1/f.Std, f.Min, f.Max
	nulls := col.NullN() > 0
	for r, x := range vals[lo : lo+t.rows] {
		v := float64(x)
		// One test sorts out the rare cases: it fails for NaN and for
		// every value outside the public range, finite or not.
		if !(v >= vlo && v <= vhi) || (nulls && col.IsNull(lo+r)) {
			switch {
			case v != v || (nulls && col.IsNull(lo+r)):
				if f.Missing {
					d[miss+r*rs] = 1
				}
				continue // the mean encodes as 0
			case v > vhi: // the public range bounds every value
				v = vhi
			default:
				v = vlo
			}
		}
		d[at+r*rs] = float32((v - mean) * inv)
	}
}

// dictBuckets maps each entry of a string dictionary onto f's one-hot
// bucket: its vocabulary index, "other" or "missing".
func dictBuckets(dict arrow.Array, f *Feature) []int32 {
	m := make([]int32, dict.Len())
	for k := range m {
		if dict.IsNull(k) {
			m[k] = int32(len(f.Vocab) + 1)
		} else {
			m[k] = int32(f.bucket(dictString(dict, k)))
		}
	}
	return m
}

// bucket returns the one-hot index of string s: its vocabulary index, or
// the "other" bucket.
func (f *Feature) bucket(s string) int {
	if j, ok := f.index[s]; ok {
		return int(j)
	}
	return len(f.Vocab)
}

// encodeString encodes rows lo… of col into the t.rows rows of t; m maps a
// dictionary column's indices onto buckets (see dictBuckets).
func encodeString(col arrow.Array, lo int, m []int32, f *Feature, t tile) {
	d, at := t.d, t.at(0, f.Offset)
	missing := len(f.Vocab) + 1
	switch a := col.(type) {
	case *array.String:
		for r := 0; r < t.rows; r++ {
			j := missing
			if a.IsValid(lo + r) {
				j = f.bucket(a.Value(lo + r))
			}
			d[at+r*t.rs+j*t.cs] = 1
		}
	case *array.LargeString:
		for r := 0; r < t.rows; r++ {
			j := missing
			if a.IsValid(lo + r) {
				j = f.bucket(a.Value(lo + r))
			}
			d[at+r*t.rs+j*t.cs] = 1
		}
	case *array.StringView, *array.Binary, *array.LargeBinary, *array.BinaryView:
		for r := 0; r < t.rows; r++ {
			j := missing
			if col.IsValid(lo + r) {
				v, _ := stringAt(col, lo+r)
				j = f.bucket(v)
			}
			d[at+r*t.rs+j*t.cs] = 1
		}
	case *array.Dictionary:
		if m == nil {
			m = dictBuckets(a.Dictionary(), f)
		}
		for r := 0; r < t.rows; r++ {
			j := missing
			if a.IsValid(lo + r) {
				j = int(m[a.GetValueIndex(lo+r)])
			}
			d[at+r*t.rs+j*t.cs] = 1
		}
	}
}
