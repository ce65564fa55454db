package arrowio

import (
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
)

// DuckDB writes a NULL FLOAT[n] (an ARRAY, stored as a Parquet LIST) as n
// level entries, the first starting the row and n−1 more continuing it,
// all undefined, where the format has one entry for a null list. Arrow
// Go v15's reader gives such a null row n−1 child slots that the column's
// values do not have, so every later row of the chunk reads values shifted
// from the rows before it (and, far enough, past the end of the values).
// pate's list fast path leaves a chunk with nulls to that reader, so the
// columns it decodes are checked: a null list entry with child slots is
// refused, naming the column, rather than read wrong. Null lists written
// as the format says (by Arrow, Polars, pyarrow) have none; DuckDB's
// null elements and empty lists read right.

// errNullListSlots says why such a column is refused and the ways out.
var errNullListSlots = fmt.Errorf("a list column whose null rows are written with child entries (as DuckDB writes a NULL FLOAT[n]), which the Parquet reader pate uses would read with every later row's values shifted; leave the column out (--features, --exclude) or write it without null rows (in DuckDB: WHERE col IS NOT NULL, or COALESCE): %w", ErrFormat)

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
	if l.NullN() > 0 {
		for i := 0; i < l.Len(); i++ {
			if s, e := l.ValueOffsets(i); l.IsNull(i) && e > s {
				return errNullListSlots
			}
		}
	}
	return checkNullLists(l.ListValues())
}

// checkRecordLists checks every column of rec with checkNullLists; the
// error names the column.
func checkRecordLists(rec arrow.Record) error {
	for k, col := range rec.Columns() {
		if err := checkNullLists(col); err != nil {
			return fmt.Errorf("column %q: %w", rec.Schema().Field(k).Name, err)
		}
	}
	return nil
}
