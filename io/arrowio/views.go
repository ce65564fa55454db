package arrowio

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// Polars writes its strings to Arrow IPC as string_view and its
// categoricals as dictionaries of string_view. Arrow Go v15 decodes view
// arrays but little else handles them (compute, Parquet output, pate's
// labels and encoder), so the IPC readers hand them out as the classic
// layout: string_view becomes utf8, binary_view binary, a dictionary of
// either a dictionary of utf8 or binary. The values are unchanged.

// unviewType returns t with its view types replaced, and whether any was.
func unviewType(t arrow.DataType) (arrow.DataType, bool) {
	switch t.ID() {
	case arrow.STRING_VIEW:
		return arrow.BinaryTypes.String, true
	case arrow.BINARY_VIEW:
		return arrow.BinaryTypes.Binary, true
	case arrow.DICTIONARY:
		dt := t.(*arrow.DictionaryType)
		if v, ok := unviewType(dt.ValueType); ok {
			return &arrow.DictionaryType{IndexType: dt.IndexType, ValueType: v, Ordered: dt.Ordered}, true
		}
	}
	return t, false
}

// unviewSchema returns s with its view columns replaced, or nil when it
// has none.
func unviewSchema(s *arrow.Schema) *arrow.Schema {
	fields := s.Fields()
	changed := false
	for i, f := range fields {
		if t, ok := unviewType(f.Type); ok {
			fields[i].Type = t
			changed = true
		}
	}
	if !changed {
		return nil
	}
	md := s.Metadata()
	return arrow.NewSchema(fields, &md)
}

// unviewSource wraps a source whose schema has view columns.
type unviewSource struct {
	source
	out *arrow.Schema
	mem memory.Allocator
	// dicts keeps, per column, the last dictionary converted and its
	// conversion: an IPC file's batches share their dictionary, which is
	// then converted once.
	dicts map[int][2]arrow.ArrayData
}

// withoutViews wraps src so that it hands out no view columns.
func withoutViews(src source, mem memory.Allocator) source {
	out := unviewSchema(src.schema())
	if out == nil {
		return src
	}
	return &unviewSource{source: src, out: out, mem: mem}
}

func (s *unviewSource) schema() *arrow.Schema { return s.out }

func (s *unviewSource) next() (arrow.Record, error) {
	rec, err := s.source.next()
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, c := range rec.Columns() {
		if _, ok := unviewType(c.DataType()); !ok {
			c.Retain()
			cols[i] = c
			continue
		}
		d, err := s.convert(i, c.Data())
		if err != nil {
			return nil, fmt.Errorf("column %q: %w: %w", rec.ColumnName(i), ErrFormat, err)
		}
		cols[i] = array.MakeFromData(d)
		d.Release()
	}
	return array.NewRecord(s.out, cols, rec.NumRows()), nil
}

// convert converts column i's data, reusing the conversion of its
// dictionary when the batch shares the previous batch's.
func (s *unviewSource) convert(i int, d arrow.ArrayData) (*array.Data, error) {
	dt, ok := d.DataType().(*arrow.DictionaryType)
	if !ok || d.Dictionary() == nil {
		return unviewData(d, s.mem)
	}
	if s.dicts == nil {
		s.dicts = map[int][2]arrow.ArrayData{}
	}
	cached, ok := s.dicts[i]
	if !ok || cached[0] != d.Dictionary() {
		nd, err := unviewData(d.Dictionary(), s.mem)
		if err != nil {
			return nil, fmt.Errorf("dictionary: %w", err)
		}
		if ok {
			cached[0].Release()
			cached[1].Release()
		}
		d.Dictionary().Retain()
		cached = [2]arrow.ArrayData{d.Dictionary(), nd}
		s.dicts[i] = cached
	}
	nt, _ := unviewType(dt)
	return array.NewDataWithDictionary(nt, d.Len(), d.Buffers(), d.NullN(), d.Offset(), cached[1].(*array.Data)), nil
}

func (s *unviewSource) close() error {
	for _, c := range s.dicts {
		c[0].Release()
		c[1].Release()
	}
	s.dicts = nil
	return s.source.close()
}

// unviewData converts a view array, or a dictionary array of views, to
// the classic layout. Every view is checked against its buffers: a
// corrupt file gives an error, not a panic.
func unviewData(d arrow.ArrayData, mem memory.Allocator) (*array.Data, error) {
	if dt, ok := d.DataType().(*arrow.DictionaryType); ok {
		nt, _ := unviewType(dt)
		dict := d.Dictionary()
		if dict == nil {
			return nil, fmt.Errorf("dictionary column without a dictionary")
		}
		nd, err := unviewData(dict, mem)
		if err != nil {
			return nil, fmt.Errorf("dictionary: %w", err)
		}
		defer nd.Release()
		return array.NewDataWithDictionary(nt, d.Len(), d.Buffers(), d.NullN(), d.Offset(), nd), nil
	}
	nt, _ := unviewType(d.DataType())
	bufs := d.Buffers()
	n, off := d.Len(), d.Offset()
	if len(bufs) < 2 || bufs[1] == nil {
		if n == 0 {
			return array.NewData(nt, 0, []*memory.Buffer{nil, nil, nil}, nil, 0, 0), nil
		}
		return nil, fmt.Errorf("%s array without a views buffer", d.DataType())
	}
	views := bufs[1].Bytes()
	if len(views) < (off+n)*arrow.ViewHeaderSizeBytes {
		return nil, fmt.Errorf("%s views of %d bytes for %d values", d.DataType(), len(views), off+n)
	}
	var valid []byte
	if bufs[0] != nil && d.NullN() > 0 {
		valid = bufs[0].Bytes()
		if len(valid)*8 < off+n {
			return nil, fmt.Errorf("validity bitmap of %d bytes for %d values", len(valid), off+n)
		}
	}
	data := bufs[2:]
	value := func(i int) ([]byte, error) {
		v := views[(off+i)*arrow.ViewHeaderSizeBytes:][:arrow.ViewHeaderSizeBytes]
		size := int32(binary.LittleEndian.Uint32(v))
		if size < 0 {
			return nil, fmt.Errorf("negative length %d at value %d", size, i)
		}
		if size <= viewInline {
			return v[4 : 4+size], nil
		}
		bi := int32(binary.LittleEndian.Uint32(v[8:]))
		bo := int32(binary.LittleEndian.Uint32(v[12:]))
		if bi < 0 || int(bi) >= len(data) || data[bi] == nil {
			return nil, fmt.Errorf("value %d refers to data buffer %d of %d", i, bi, len(data))
		}
		b := data[bi].Bytes()
		if bo < 0 || int64(bo)+int64(size) > int64(len(b)) {
			return nil, fmt.Errorf("value %d at [%d, %d) outside its data buffer of %d bytes", i, bo, int64(bo)+int64(size), len(b))
		}
		return b[bo : bo+size], nil
	}
	total := 0
	for i := 0; i < n; i++ {
		if valid != nil && !bitSet(valid, off+i) {
			continue
		}
		b, err := value(i)
		if err != nil {
			return nil, err
		}
		total += len(b)
		if total > 1<<31-1 {
			return nil, fmt.Errorf("more than 2 GiB of values in one batch")
		}
	}
	bld := array.NewBinaryBuilder(mem, nt.(arrow.BinaryDataType))
	defer bld.Release()
	bld.Reserve(n)
	bld.ReserveData(total)
	for i := 0; i < n; i++ {
		if valid != nil && !bitSet(valid, off+i) {
			bld.AppendNull()
			continue
		}
		b, _ := value(i)
		bld.Append(b)
	}
	a := bld.NewArray()
	defer a.Release()
	out := a.Data().(*array.Data)
	out.Retain()
	return out, nil
}

func bitSet(b []byte, i int) bool { return b[i>>3]&(1<<(uint(i)&7)) != 0 }

// viewInline is the longest value a view holds inline (Arrow columnar
// format, "Variable-size Binary View Layout").
const viewInline = 12
