package arrowio

import (
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
)

// validateRecord checks what Arrow Go v15 does not check when decoding IPC
// bytes: that every column has the record's length and that its buffers are
// large enough for its length and offset, and that variable-length offsets
// stay within their data buffer. Without it a corrupt file decodes fine and
// panics later, in the caller's code.
func validateRecord(rec arrow.Record) error {
	for i, col := range rec.Columns() {
		if int64(col.Len()) != rec.NumRows() {
			return fmt.Errorf("column %d has %d rows, batch has %d", i, col.Len(), rec.NumRows())
		}
		if err := validateData(col.Data()); err != nil {
			return fmt.Errorf("column %q: %w", rec.ColumnName(i), err)
		}
	}
	return nil
}

func validateData(d arrow.ArrayData) error {
	n, off := int64(d.Len()), int64(d.Offset())
	if n < 0 || off < 0 {
		return fmt.Errorf("negative length %d or offset %d", n, off)
	}
	end := n + off
	bufs := d.Buffers()
	bufLen := func(i int) int64 {
		if i >= len(bufs) || bufs[i] == nil {
			return 0
		}
		return int64(bufs[i].Len())
	}
	if d.NullN() != 0 && len(bufs) > 0 && bufs[0] != nil && bufLen(0)*8 < end {
		return fmt.Errorf("validity bitmap of %d bytes for %d values", bufLen(0), end)
	}
	if d.NullN() > 0 && (len(bufs) == 0 || bufs[0] == nil) && d.DataType().ID() != arrow.NULL &&
		d.DataType().ID() != arrow.SPARSE_UNION && d.DataType().ID() != arrow.DENSE_UNION &&
		d.DataType().ID() != arrow.RUN_END_ENCODED {
		return fmt.Errorf("%d nulls but no validity bitmap", d.NullN())
	}
	switch dt := d.DataType().(type) {
	case *arrow.BooleanType:
		if bufLen(1)*8 < end {
			return fmt.Errorf("boolean data of %d bytes for %d values", bufLen(1), end)
		}
	case arrow.FixedWidthDataType:
		w := int64(dt.BitWidth())
		if w%8 == 0 && bufLen(1) < end*(w/8) {
			return fmt.Errorf("%s data of %d bytes for %d values", dt, bufLen(1), end)
		}
	case *arrow.StringType, *arrow.BinaryType:
		if n == 0 {
			return nil
		}
		if bufLen(1) < (end+1)*4 {
			return fmt.Errorf("%s offsets of %d bytes for %d values", dt, bufLen(1), end)
		}
		offs := arrow.Int32Traits.CastFromBytes(bufs[1].Bytes())[off : end+1]
		return checkOffsets32(offs, bufLen(2))
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		if n == 0 {
			return nil
		}
		if bufLen(1) < (end+1)*8 {
			return fmt.Errorf("%s offsets of %d bytes for %d values", dt, bufLen(1), end)
		}
		offs := arrow.Int64Traits.CastFromBytes(bufs[1].Bytes())[off : end+1]
		for i := 1; i < len(offs); i++ {
			if offs[i] < offs[i-1] {
				return fmt.Errorf("decreasing offsets at %d", i)
			}
		}
		if offs[0] < 0 || offs[len(offs)-1] > bufLen(2) {
			return fmt.Errorf("offsets [%d, %d] outside data of %d bytes", offs[0], offs[len(offs)-1], bufLen(2))
		}
	case *arrow.ListType, *arrow.MapType:
		if len(d.Children()) != 1 {
			return fmt.Errorf("%s with %d children", dt, len(d.Children()))
		}
		if n > 0 {
			if bufLen(1) < (end+1)*4 {
				return fmt.Errorf("%s offsets of %d bytes for %d values", dt, bufLen(1), end)
			}
			offs := arrow.Int32Traits.CastFromBytes(bufs[1].Bytes())[off : end+1]
			if err := checkOffsets32(offs, int64(d.Children()[0].Len()+d.Children()[0].Offset())); err != nil {
				return err
			}
		}
		return validateData(d.Children()[0])
	case *arrow.StructType:
		if len(d.Children()) != dt.NumFields() {
			return fmt.Errorf("struct with %d fields has %d children", dt.NumFields(), len(d.Children()))
		}
		for i, c := range d.Children() {
			if int64(c.Len()) < end {
				return fmt.Errorf("struct field %d has %d values, need %d", i, c.Len(), end)
			}
			if err := validateData(c); err != nil {
				return fmt.Errorf("struct field %d: %w", i, err)
			}
		}
	case *arrow.NullType:
	default:
		// Other nested and dictionary types: make the array, which checks
		// some invariants by panicking (recovered by the caller's guard).
		a := array.MakeFromData(d)
		a.Release()
	}
	return nil
}

func checkOffsets32(offs []int32, dataLen int64) error {
	for i := 1; i < len(offs); i++ {
		if offs[i] < offs[i-1] {
			return fmt.Errorf("decreasing offsets at %d", i)
		}
	}
	if offs[0] < 0 || int64(offs[len(offs)-1]) > dataLen {
		return fmt.Errorf("offsets [%d, %d] outside data of %d bytes", offs[0], offs[len(offs)-1], dataLen)
	}
	return nil
}
