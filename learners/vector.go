package learners

import (
	"fmt"
	"math"
	"runtime"
	"sync"

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

// listRun returns the number of leading features of fs that are elements
// 0, 1, … of one list column, each one encoded column (no missing
// indicator) right after the previous one.
func listRun(fs []Feature) int {
	if len(fs) == 0 || fs[0].Column == "" || fs[0].Elem != 0 {
		return 0
	}
	n := 0
	for n < len(fs) && fs[n].Column == fs[0].Column && fs[n].Elem == n && !fs[n].Missing && fs[n].Offset == fs[0].Offset+n {
		n++
	}
	return n
}

// encodeList encodes the elements fs (a listRun) of rows lo… of list
// column col into t, as encodeElem does one element at a time, if the
// list's values are float32 or float64; it returns false, having written
// nothing, otherwise. Each row's values are contiguous: it reads them in
// one sweep. ls is fs's listScale (nil: it is made here).
func encodeList(col arrow.Array, lo int, fs []Feature, ls *listScale, t tile) bool {
	a, ok := col.(listArray)
	if !ok {
		return false
	}
	if ls == nil {
		ls = newListScale(fs)
	}
	switch vals := a.ListValues().(type) {
	case *array.Float32:
		encodeListOf(a, vals.Float32Values(), lo, fs, ls, t)
	case *array.Float64:
		encodeListOf(a, vals.Float64Values(), lo, fs, ls, t)
	default:
		return false
	}
	return true
}

// listScale holds, for each element of a run of list features, what
// encodeListOf reads per value: the mean, the standard deviation and its
// inverse, and the element's offset in an encoded row. Prepare makes it once
// per batch: made per call it was 12 KB of allocations for a 384-element
// embedding, and most of the time when rows are encoded one at a time (a
// teacher's rows of the sensitive data).
type listScale struct {
	mean, std, inv []float64
	lo, hi         []float64 // the public range each element is clamped to
	off            []int
	run            bool // off[j] is off[0]+j: the elements are adjacent in a row
}

func newListScale(fs []Feature) *listScale {
	n := len(fs)
	ls := &listScale{mean: make([]float64, n), std: make([]float64, n), inv: make([]float64, n),
		lo: make([]float64, n), hi: make([]float64, n), off: make([]int, n), run: true}
	for j := range fs {
		ls.mean[j], ls.std[j], ls.inv[j], ls.off[j] = fs[j].Mean, fs[j].Std, 1/fs[j].Std, fs[j].Offset
		ls.lo[j], ls.hi[j] = fs[j].Min, fs[j].Max
		ls.run = ls.run && fs[j].Offset == fs[0].Offset+j
	}
	return ls
}

func encodeListOf[T float32 | float64](a listArray, vals []T, lo int, fs []Feature, ls *listScale, t tile) {
	cs := t.cs
	listNulls := a.NullN() > 0
	values := a.ListValues()
	valNulls := values.NullN() > 0
	for r := 0; r < t.rows; r++ {
		if listNulls && a.IsNull(lo+r) {
			continue // every element is missing (0)
		}
		s, e := a.ValueOffsets(lo + r)
		e = min(e, s+int64(len(fs)), int64(len(vals)))
		if s >= e {
			continue // an empty list: every element is missing (0)
		}
		row := vals[s:e]
		n := len(row)
		mean, std, inv, at := ls.mean[:n], ls.std[:n], ls.inv[:n], ls.off[:n]
		vlo, vhi := ls.lo[:n], ls.hi[:n]
		off := r * t.rs
		if ls.run && cs == 1 && !valNulls {
			// A row-major tile and adjacent elements (an embedding's
			// rows, encoded for a teacher): the row's run is one slice
			// of the tile, written in order.
			encodeRun(row, t.d[off+at[0]:off+at[0]+n], mean, std, inv, vlo, vhi)
			continue
		}
		for j, x := range row {
			if valNulls && values.IsNull(int(s)+j) {
				continue // the mean encodes as 0
			}
			v := float64(x)
			// (*Feature).scale, inlined.
			if v != v {
				continue // the mean encodes as 0
			}
			if v > vhi[j] {
				v = vhi[j]
			} else if v < vlo[j] {
				v = vlo[j]
			}
			t.d[at[j]*cs+off] = scaled(v, mean[j], std[j], inv[j])
		}
	}
}

// encodeRun is encodeListOf's loop for one row whose elements go to the
// adjacent values of dst, none null: the same values, written in order
// with no offset table. Each value is clamped to its element's public
// range [lo, hi] (±Inf included); NaN encodes as the mean (0).
func encodeRun[T float32 | float64](row []T, dst []float32, mean, std, inv, lo, hi []float64) {
	n := len(row)
	dst = dst[:n]
	mean, std, inv, lo, hi = mean[:n], std[:n], inv[:n], lo[:n], hi[:n]
	for j, x := range row {
		v := float64(x)
		if v != v {
			continue // the mean encodes as 0
		}
		if v > hi[j] {
			v = hi[j]
		} else if v < lo[j] {
			v = lo[j]
		}
		dst[j] = scaled(v, mean[j], std[j], inv[j])
	}
}

// encodeListMissing writes the missing indicator f of a list column (see
// KindListMissing) for rows lo… of col into t.
func encodeListMissing(col arrow.Array, lo int, f *Feature, t tile) {
	a := col.(listArray)
	values := a.ListValues()
	for r := 0; r < t.rows; r++ {
		if listMissingAt(a, values, lo+r, f.ListWidth) {
			t.d[t.at(r, f.Offset)] = 1
		}
	}
}

// listMissingAt reports whether row r of a is missing an element of the
// width encoded: a null list, a shorter one, a null or NaN element.
func listMissingAt(a listArray, values arrow.Array, r, width int) bool {
	if a.IsNull(r) {
		return true
	}
	s, e := a.ValueOffsets(r)
	e = min(e, s+int64(width))
	if e-s < int64(width) || e > int64(values.Len()) {
		return true
	}
	if values.NullN() > 0 {
		for i := s; i < e; i++ {
			if values.IsNull(int(i)) {
				return true
			}
		}
	}
	switch v := values.(type) {
	case *array.Float32:
		for _, x := range v.Float32Values()[s:e] {
			if x != x {
				return true
			}
		}
	case *array.Float64:
		for _, x := range v.Float64Values()[s:e] {
			if x != x {
				return true
			}
		}
	default:
		for i := s; i < e; i++ {
			if x, ok := numericAt(values, int(i)); !ok || x != x {
				return true
			}
		}
	}
	return false
}

// elemRun returns the number of leading features of fs that are elements
// 0, 1, … of one list column (before fitting: no offsets yet).
func elemRun(fs []Feature) int {
	if len(fs) == 0 || fs[0].Column == "" || fs[0].Elem != 0 {
		return 0
	}
	n := 0
	for n < len(fs) && fs[n].Column == fs[0].Column && fs[n].Elem == n {
		n++
	}
	return n
}

// addList adds elements 0 … len(stats)−1 of the first n rows of list
// column col to stats, as addElem does one element at a time (each
// element's values in row order: the same sums), if the column's values
// are float32 or float64; it returns false, having added nothing,
// otherwise.
func addList(stats []fitStats, col arrow.Array, n int) bool {
	a, ok := col.(listArray)
	if !ok {
		return false
	}
	switch vals := a.ListValues().(type) {
	case *array.Float32:
		addListOf(stats, a, vals.Float32Values(), n)
	case *array.Float64:
		addListOf(stats, a, vals.Float64Values(), n)
	default:
		return false
	}
	return true
}

// parallelFitValues is the number of values of a batch from which
// addListOf splits the elements across GOMAXPROCS goroutines (a variable
// for the tests).
var parallelFitValues = 1 << 18

// addListOf adds the values to stats. Each element's statistics are
// updated in row order whatever the split, so the sums are the same bits
// on any number of goroutines: the elements are split into contiguous
// ranges, one per goroutine, each reading its range of every row.
func addListOf[T float32 | float64](stats []fitStats, a listArray, vals []T, n int) {
	values := a.ListValues()
	values.NullN() // computed once, here, before goroutines share it
	a.NullN()
	workers := min(runtime.GOMAXPROCS(0), len(stats))
	if n*len(stats) < parallelFitValues || workers < 2 {
		addListRange(stats, 0, len(stats), a, vals, n)
		return
	}
	chunk := (len(stats) + workers - 1) / workers
	var wg sync.WaitGroup
	for k0 := 0; k0 < len(stats); k0 += chunk {
		k1 := min(len(stats), k0+chunk)
		wg.Add(1)
		go func() {
			defer wg.Done()
			addListRange(stats, k0, k1, a, vals, n)
		}()
	}
	wg.Wait()
}

// addListRange adds elements k0 … k1−1 of the first n rows to stats.
func addListRange[T float32 | float64](stats []fitStats, k0, k1 int, a listArray, vals []T, n int) {
	values := a.ListValues()
	nulls := values.NullN() > 0
	listNulls := a.NullN() > 0
	for r := 0; r < n; r++ {
		k := k0
		if !listNulls || !a.IsNull(r) {
			s, e := a.ValueOffsets(r)
			e = min(e, s+int64(k1), int64(len(vals)))
			for j := s + int64(k0); j < e; j++ {
				stats[k].addNum(float64(vals[j]), !nulls || values.IsValid(int(j)))
				k++
			}
		}
		for ; k < k1; k++ {
			stats[k].addNum(0, false) // a null list, or a list too short
		}
	}
}

// scaled returns float32((v − mean) / std), as (*Feature).scale computes
// it, for finite v, mean and std > 0 (inv = 1/std), with a multiplication
// instead of the division where that gives the same float32: the product
// is within 3 units in the last place of the quotient (float64), so they
// round to the same float32 unless a float32 rounding boundary (the
// midpoint between two float32s, where the 29 bits dropped are 1<<28) is
// within that distance, or the value is outside float32's normal range.
// Then it divides.
func scaled(v, mean, std, inv float64) float32 {
	q := (v - mean) * inv
	b := math.Float64bits(q)
	// |q| in [2^-126, 2^127): a normal float32, 29 bits dropped.
	if e := b >> 52 & 0x7ff; e >= 1023-126 && e <= 1023+126 {
		if d := b&(1<<29-1) - 1<<28; d+8 > 16 { // more than 8 units from the midpoint
			return float32(q)
		}
	}
	return float32((v - mean) / std)
}
