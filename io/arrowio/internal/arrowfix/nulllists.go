package arrowfix

import (
	"fmt"
	"github.com/pate-tool/pate/io/arrowio/internal/ioerr"
	"unsafe"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// DuckDB writes a NULL FLOAT[n] (an ARRAY, stored as a Parquet LIST) as n
// level entries, the first starting the row and n−1 more continuing it,
// all undefined, where the format has one entry for a null list. Arrow
// Go v15's reader gives such a null row n−1 child slots that the column's
// values do not have (an undefined entry adds no value), so every later
// row of the chunk would read values shifted from the rows before it.
// pate's list fast path leaves a chunk with nulls to that reader, so the
// lists it decodes are repaired: a null row gets no child slots, and the
// slots of the other rows, which are right, then add up to the values
// exactly. Where they do not (a layout other than DuckDB's, or a list
// nested in another list or a struct), the column is refused, naming it,
// rather than read wrong. Null lists written as the format says (by Arrow,
// Polars, pyarrow) have no slots and are left as they are; DuckDB's null
// elements and empty lists read right.
//
// Upstream fix that retires this file: pqarrow giving an undefined list
// entry no child slot (and DuckDB writing one level entry for a null list).

// ErrNullListSlots says why such a column is refused and the ways out.
var ErrNullListSlots = fmt.Errorf("a list column whose null rows are written with child entries (as DuckDB writes a NULL FLOAT[n]) that do not add up to its values, which the Parquet reader pate uses would read with later rows' values shifted; leave the column out (--features, --exclude) or write it without null rows (in DuckDB: WHERE col IS NOT NULL, or COALESCE): %w", ioerr.ErrFormat)

// RepairNullLists returns a with the child slots of a top-level list's
// null rows taken out (a itself, retained once more, if it has none), or
// ErrNullListSlots if they do not come out right or a nested list has
// them. The caller releases a and owns the result.
func RepairNullLists(a arrow.Array, mem memory.Allocator) (arrow.Array, error) {
	var l array.ListLike
	switch c := a.(type) {
	case *array.List:
		l = c
	case *array.LargeList:
		l = c
	default:
		if err := checkNullLists(a); err != nil {
			return nil, err
		}
		a.Retain()
		return a, nil
	}
	if err := checkNullLists(l.ListValues()); err != nil {
		return nil, err
	}
	if !nullSlots(l) {
		a.Retain()
		return a, nil
	}
	if c, ok := a.(*array.List); ok {
		return repairOffsets(c, c.Offsets(), mem)
	}
	c := a.(*array.LargeList)
	return repairOffsets(c, c.Offsets(), mem)
}

// repairOffsets rebuilds l with its null rows' slots taken out: each other
// row keeps its length, and the lengths must add up to l's values.
func repairOffsets[T int32 | int64](l array.ListLike, offs []T, mem memory.Allocator) (arrow.Array, error) {
	n := l.Len()
	if l.Data().Offset() != 0 || len(offs) < n+1 || offs[0] != 0 {
		return nil, ErrNullListSlots
	}
	var w T
	buf := memory.NewResizableBuffer(mem)
	defer buf.Release()
	buf.Resize((n + 1) * int(unsafe.Sizeof(w)))
	out := arrow.GetData[T](buf.Bytes())
	out[0] = 0
	var at T
	for i := 0; i < n; i++ {
		if l.IsValid(i) {
			at += offs[i+1] - offs[i]
		}
		out[i+1] = at
	}
	if int64(at) != int64(l.ListValues().Len()) {
		return nil, ErrNullListSlots
	}
	d := l.Data()
	nd := array.NewData(d.DataType(), n, []*memory.Buffer{d.Buffers()[0], buf}, d.Children(), d.NullN(), 0)
	defer nd.Release()
	return array.MakeFromData(nd), nil
}

// nullSlots reports whether a null row of l has child slots.
func nullSlots(l array.ListLike) bool {
	if l.NullN() == 0 {
		return false
	}
	for i := 0; i < l.Len(); i++ {
		if s, e := l.ValueOffsets(i); l.IsNull(i) && e > s {
			return true
		}
	}
	return false
}

// checkNullLists returns errNullListSlots if a null entry of a list in a
// (at any depth) has child slots. (A fixed-size list's null entries have
// their width of slots by definition.)
func checkNullLists(a arrow.Array) error {
	switch c := a.(type) {
	case *array.List:
		return checkListSlots(c)
	case *array.LargeList:
		return checkListSlots(c)
	case *array.FixedSizeList:
		return checkNullLists(c.ListValues())
	case *array.Struct:
		for k := 0; k < c.NumField(); k++ {
			if err := checkNullLists(c.Field(k)); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkListSlots is checkNullLists for a list or large list.
func checkListSlots(l array.ListLike) error {
	if nullSlots(l) {
		return ErrNullListSlots
	}
	return checkNullLists(l.ListValues())
}

// RepairRecordLists applies RepairNullLists to every column of rec and
// returns the record to use (rec itself, retained once more, if no column
// changed); the error names the column. The caller releases rec.
func RepairRecordLists(rec arrow.Record, mem memory.Allocator) (arrow.Record, error) {
	var cols []arrow.Array
	for k, col := range rec.Columns() {
		fixed, err := RepairNullLists(col, mem)
		if err != nil {
			for _, c := range cols {
				if c != nil {
					c.Release()
				}
			}
			return nil, fmt.Errorf("column %q: %w", rec.Schema().Field(k).Name, err)
		}
		if fixed == col && cols == nil {
			fixed.Release()
			continue
		}
		if cols == nil {
			cols = make([]arrow.Array, len(rec.Columns()))
			for j := 0; j < k; j++ {
				cols[j] = rec.Column(j)
				cols[j].Retain()
			}
		}
		cols[k] = fixed
	}
	if cols == nil {
		rec.Retain()
		return rec, nil
	}
	out := array.NewRecord(rec.Schema(), cols, rec.NumRows())
	for _, c := range cols {
		c.Release()
	}
	return out, nil
}
