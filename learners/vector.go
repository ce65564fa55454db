package learners

import (
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
)

// Columns of lists of numbers (embeddings): each element is a numeric
// feature of its own (see Encoder).

// listArray is what fixed_size_list, list and large_list arrays share.
type listArray interface {
	arrow.Array
	ValueOffsets(i int) (start, end int64)
	ListValues() arrow.Array
}

// vectorWidth is the number of elements a list column is encoded with:
// a fixed_size_list's size, or the longest list among the leading
// sampleRows rows of batches (public data).
func vectorWidth(t arrow.DataType, name string, batches []arrow.Record, sampleRows int) (int, error) {
	if ft, ok := t.(*arrow.FixedSizeListType); ok {
		if ft.Len() < 1 || ft.Len() > MaxVectorWidth {
			return 0, fmt.Errorf("%s holds %d values per row; pate encodes 1 to %d", t, ft.Len(), MaxVectorWidth)
		}
		return int(ft.Len()), nil
	}
	width := 0
	left := sampleRows
	for _, rec := range batches {
		if left <= 0 {
			break
		}
		n := min(int(rec.NumRows()), left)
		left -= n
		idx := rec.Schema().FieldIndices(name)
		if len(idx) == 0 {
			return 0, fmt.Errorf("column is missing from a batch: %w", ErrSchemaMismatch)
		}
		a, ok := rec.Column(idx[0]).(listArray)
		if !ok {
			return 0, fmt.Errorf("column has type %s in a batch: %w", rec.Column(idx[0]).DataType(), ErrSchemaMismatch)
		}
		for r := 0; r < n; r++ {
			if a.IsNull(r) {
				continue
			}
			s, e := a.ValueOffsets(r)
			width = max(width, int(e-s))
		}
	}
	if width == 0 {
		return 0, fmt.Errorf("%s: no non-empty list in the fitting sample to fix the number of elements", t)
	}
	if width > MaxVectorWidth {
		return 0, fmt.Errorf("%s: lists of up to %d values in the fitting sample; pate encodes at most %d", t, width, MaxVectorWidth)
	}
	return width, nil
}

// elemSpan returns where row r's element elem is in a's values, or false
// when it is missing (a null list, or a list too short).
func elemSpan(a listArray, r, elem int) (int, bool) {
	if a.IsNull(r) {
		return 0, false
	}
	s, e := a.ValueOffsets(r)
	i := s + int64(elem)
	if i >= e || i >= int64(a.ListValues().Len()) || i < 0 {
		return 0, false
	}
	return int(i), true
}

// addElem adds element elem of the first n rows of a list column.
func (s *fitStats) addElem(col arrow.Array, elem, n int) {
	a := col.(listArray)
	vals := a.ListValues()
	for r := 0; r < n; r++ {
		i, ok := elemSpan(a, r, elem)
		if !ok {
			s.addNum(0, false)
			continue
		}
		v, valid := numericAt(vals, i)
		s.addNum(v, valid)
	}
}

// encodeElem encodes element f.Elem of rows lo… of list column col into
// the t.rows rows of t.
func encodeElem(col arrow.Array, lo int, f *Feature, t tile) {
	a := col.(listArray)
	switch vals := a.ListValues().(type) {
	case *array.Float32:
		encodeElemOf(a, vals.Float32Values(), lo, f, t)
	case *array.Float64:
		encodeElemOf(a, vals.Float64Values(), lo, f, t)
	default:
		for r := 0; r < t.rows; r++ {
			v, ok := 0.0, false
			if i, in := elemSpan(a, lo+r, f.Elem); in {
				v, ok = numericAt(vals, i)
			}
			val, miss := f.scale(v, ok)
			t.d[t.at(r, f.Offset)] = val
			if f.Missing {
				t.d[t.at(r, f.Offset+1)] = miss
			}
		}
	}
}

func encodeElemOf[T float32 | float64](a listArray, vals []T, lo int, f *Feature, t tile) {
	values := a.ListValues()
	nulls := values.NullN() > 0
	for r := 0; r < t.rows; r++ {
		i, ok := elemSpan(a, lo+r, f.Elem)
		v := 0.0
		if ok {
			if nulls && values.IsNull(i) {
				ok = false
			} else {
				v = float64(vals[i])
			}
		}
		val, miss := f.scale(v, ok)
		t.d[t.at(r, f.Offset)] = val
		if f.Missing {
			t.d[t.at(r, f.Offset+1)] = miss
		}
	}
}
