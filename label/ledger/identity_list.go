package ledger

import (
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"

	"github.com/pate-tool/pate/label/internal/listtext"
)

// A list of numbers (an embedding, mostly) is canonical element by
// element: tagList and its length, then each element's canonical number,
// as a number column's would be (an integer when it is whole and fits
// int64, else a float64 read through a float32's shortest decimal), with
// one difference that saves making the text: a number that is a float32's
// shortest decimal, neither whole nor past 2^24, is tagF32 and that
// float32's bits. So a float32 list, a float64 list of the same decimals,
// an integer list of whole ones and a CSV cell of their text ("[0.1, 2]",
// as DuckDB writes a list) are one value; a float64 that is not a float32's
// shortest decimal (such as float64(float32(0.1))) is its own bits, as a
// float64 column's is. Hashing 38 million float32s of an embedding
// column this way takes a tenth of the time formatting their text did.
//
// That listtext.From64 finds the float32 again from the float64 its
// shortest decimal reads as (so the two forms agree) is checked for every
// float32 by listtext's TestAppendFloat32Exhaustive.

const (
	tagList = 0x05 // a list of numbers: its length, then its elements
	tagF32  = 0x06 // a float32's shortest decimal: the float32's bits
)

// bits2p24 is the bits of float32 2^24: from it on every float32 is whole.
const bits2p24 = 0x4b800000

// putIntOf mixes in an integer that fits int64.
func putIntOf[T int8 | int16 | int32 | uint8 | uint16 | uint32](l *lanes, x T) { putInt(l, int64(x)) }

// putNum32 mixes in a float32 list element.
func putNum32(l *lanes, x float32) {
	u := math.Float32bits(x)
	switch {
	case fractional32(u):
		l.put(tagF32, uint64(u), uint64(u))
	case u&^(1<<31) >= bits2p24: // from 2^24 on (whole), ±Inf, NaN
		putFloat(l, listtext.Float64(x))
	default: // whole
		putInt(l, int64(x))
	}
}

// fractional32 reports whether the float32 with bits u has bits below the
// units: not whole, and so below 2^24 and finite. It has no branch on the
// exponent (an embedding's elements are on either side of 1 at random, and
// the mispredicted branch was half the identity's time): the mask of the
// bits below the units is every bit when the exponent is negative (a shift
// of 64 or more), which leaves zero the only such value that is whole.
// (Checked equal to the branching form on all 2^32 bit patterns.)
func fractional32(u uint32) bool {
	abs := u &^ (1 << 31)
	ex := int(abs>>23) - 127
	sh := uint(23-ex) + uint(ex>>63)&64
	return abs < bits2p24 && uint64(abs)&(1<<sh-1) != 0
}

// putNum64 mixes in a float64 list element, or a number in a list's text.
func putNum64(l *lanes, y float64) {
	if !(math.Abs(y) < 1<<24) || y == math.Trunc(y) {
		putFloat(l, y)
		return
	}
	if x, ok := listtext.From64(y); ok {
		u := math.Float32bits(x)
		l.put(tagF32, uint64(u), uint64(u))
		return
	}
	putFloat(l, y)
}

// putNumListColumn mixes each row of the list column c (a) into rows
// when its elements are numbers, on every core (a few hundred elements a
// row), and reports whether they are.
func putNumListColumn(rows []lanes, c arrow.Array, a array.ListLike) bool {
	var part func(lo, hi int)
	switch v := a.ListValues().(type) {
	case *array.Float32:
		part = func(lo, hi int) { putLists32(rows, c, a, v, lo, hi) }
	case *array.Float64:
		part = numLists(rows, c, a, v, v.Float64Values(), putNum64)
	case *array.Int64:
		part = numLists(rows, c, a, v, v.Int64Values(), putInt)
	case *array.Int32:
		part = numLists(rows, c, a, v, v.Int32Values(), putIntOf[int32])
	case *array.Int16:
		part = numLists(rows, c, a, v, v.Int16Values(), putIntOf[int16])
	case *array.Int8:
		part = numLists(rows, c, a, v, v.Int8Values(), putIntOf[int8])
	case *array.Uint64:
		part = numLists(rows, c, a, v, v.Uint64Values(), putUint64)
	case *array.Uint32:
		part = numLists(rows, c, a, v, v.Uint32Values(), putIntOf[uint32])
	case *array.Uint16:
		part = numLists(rows, c, a, v, v.Uint16Values(), putIntOf[uint16])
	case *array.Uint8:
		part = numLists(rows, c, a, v, v.Uint8Values(), putIntOf[uint8])
	default:
		return false
	}
	workers := min(runtime.GOMAXPROCS(0), len(rows)/1024+1)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			part(w*len(rows)/workers, (w+1)*len(rows)/workers)
		}()
	}
	wg.Wait()
	return true
}

// eachListRow mixes rows [lo, hi) of the list column c (a), whose values
// number n, into rows: a null list is the null marker, a list tagList and
// its length, then its elements, which elems mixes into l (elements s to
// e of the values).
func eachListRow(rows []lanes, c arrow.Array, a array.ListLike, n, lo, hi int, elems func(l *lanes, s, e int)) {
	for r := lo; r < hi; r++ {
		if c.IsNull(r) {
			rows[r].put(tagNull, 0, 0)
			continue
		}
		s64, e64 := a.ValueOffsets(r)
		if s64 < 0 || e64 < s64 || e64 > int64(n) { // not in a valid array
			putValue(&rows[r], c, r)
			continue
		}
		s, e := int(s64), int(e64)
		l := rows[r]
		l.put(tagList, uint64(e-s), uint64(e-s))
		elems(&l, s, e)
		rows[r] = l
	}
}

// putLists32 is numLists for float32 elements, with the element's put
// inline: an embedding's row is hundreds of them. Each element's put waits
// for the one before it in the row (about 9 cycles: two multiplies and a
// rotate), so rows are mixed four at a time, element j of each in turn,
// while four rows in a row are lists of one length with no null: the same
// puts in the same order for each row, four chains in flight.
func putLists32(rows []lanes, c arrow.Array, a array.ListLike, vals *array.Float32, lo, hi int) {
	v := vals.Float32Values()
	nulls := vals.NullN() > 0
	one := func(pl *lanes, s, e int) {
		l := *pl
		for j, x := range v[s:e] {
			if nulls && vals.IsNull(s+j) {
				l.put(tagNull, 0, 0)
				continue
			}
			if u := math.Float32bits(x); fractional32(u) { // putNum32's first case, inline
				l.put(tagF32, uint64(u), uint64(u))
				continue
			}
			putNum32(&l, x)
		}
		*pl = l
	}
	r := lo
	for ; r+4 <= hi; r += 4 {
		if nulls || !putFour32(rows[r:r+4], c, a, v, r) {
			eachListRow(rows, c, a, len(v), r, r+4, one)
		}
	}
	eachListRow(rows, c, a, len(v), r, hi, one)
}

// putFour32 mixes rows r … r+3 of the list column c (a, values v, none
// null) into four, as eachListRow and putNum32 would, if they are
// non-null lists of one length within v, and reports whether they were.
func putFour32(four []lanes, c arrow.Array, a array.ListLike, v []float32, r int) bool {
	var s [4]int
	n := 0
	for k := range 4 {
		if c.IsNull(r + k) {
			return false
		}
		s64, e64 := a.ValueOffsets(r + k)
		if s64 < 0 || e64 < s64 || e64 > int64(len(v)) || k > 0 && int(e64-s64) != n {
			return false
		}
		s[k], n = int(s64), int(e64-s64)
	}
	l0, l1, l2, l3 := four[0], four[1], four[2], four[3]
	l0.put(tagList, uint64(n), uint64(n))
	l1.put(tagList, uint64(n), uint64(n))
	l2.put(tagList, uint64(n), uint64(n))
	l3.put(tagList, uint64(n), uint64(n))
	x0, x1, x2, x3 := v[s[0]:s[0]+n], v[s[1]:s[1]+n], v[s[2]:s[2]+n], v[s[3]:s[3]+n]
	for j := range n {
		u0, u1, u2, u3 := math.Float32bits(x0[j]), math.Float32bits(x1[j]), math.Float32bits(x2[j]), math.Float32bits(x3[j])
		if fractional32(u0) && fractional32(u1) && fractional32(u2) && fractional32(u3) {
			l0.put(tagF32, uint64(u0), uint64(u0))
			l1.put(tagF32, uint64(u1), uint64(u1))
			l2.put(tagF32, uint64(u2), uint64(u2))
			l3.put(tagF32, uint64(u3), uint64(u3))
			continue
		}
		putNum32(&l0, x0[j])
		putNum32(&l1, x1[j])
		putNum32(&l2, x2[j])
		putNum32(&l3, x3[j])
	}
	four[0], four[1], four[2], four[3] = l0, l1, l2, l3
	return true
}

// numLists returns what mixes rows [lo, hi) of the list column c (a),
// whose values vals are v, into rows, each element with put.
func numLists[T any](rows []lanes, c arrow.Array, a array.ListLike, vals arrow.Array, v []T, put func(*lanes, T)) func(lo, hi int) {
	nulls := vals.NullN() > 0
	return func(lo, hi int) {
		eachListRow(rows, c, a, len(v), lo, hi, func(l *lanes, s, e int) {
			for j := s; j < e; j++ {
				if nulls && vals.IsNull(j) {
					l.put(tagNull, 0, 0)
					continue
				}
				put(l, v[j])
			}
		})
	}
}

// putListText mixes in s, a text in brackets, as a list of numbers when
// its comma-separated elements are numbers or null (Arrow's ValueStr of a
// number list, or DuckDB's text of one, "[0.5, NULL]", in a CSV cell), and reports
// whether they are; it mixes nothing in when they are not.
func putListText(l *lanes, s string) bool {
	inner := strings.TrimSpace(s[1 : len(s)-1])
	n := 0
	if inner != "" {
		for e := range strings.SplitSeq(inner, ",") {
			if e = strings.TrimSpace(e); !strings.EqualFold(e, "null") {
				if _, err := strconv.ParseFloat(e, 64); err != nil {
					return false
				}
			}
			n++
		}
	}
	l.put(tagList, uint64(n), uint64(n))
	if n == 0 {
		return true
	}
	for e := range strings.SplitSeq(inner, ",") {
		if e = strings.TrimSpace(e); strings.EqualFold(e, "null") {
			l.put(tagNull, 0, 0)
			continue
		}
		y, _ := strconv.ParseFloat(e, 64)
		putNum64(l, y)
	}
	return true
}
