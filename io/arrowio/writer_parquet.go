package arrowio

import (
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/flight"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
)

// parquetRowGroup is the number of rows the Parquet output gathers into
// a row group (the batches are held until then; Arrow v15's buffered row
// group writer leaks, so they are written together with WriteTable).
const parquetRowGroup = 64 << 10

// parquetOut is the Parquet side of a Writer. Parquet keeps its key-value
// metadata in the footer, written last, so the reserved keys need no
// placeholder: their final values are appended at commit, unpadded, and
// the Arrow schema (ARROW:schema, which Arrow readers take the schema
// metadata from) is stored with them.
type parquetOut struct {
	fw       *pqarrow.FileWriter
	schema   *arrow.Schema     // the writer's schema, reserved keys included
	reserved map[string]string // reserved key → value if Commit gives none
	final    map[string]string // what setFinal appended, for verify
	mem      memory.Allocator

	pending []arrow.Record // retained batches of the next row groups
	rows    int64          // rows in pending
}

func newParquetOut(sink io.Writer, s *arrow.Schema, opts WriteOptions, holders map[string]string) (*parquetOut, error) {
	p := &parquetOut{schema: s, reserved: map[string]string{}, mem: opts.Allocator}
	md := s.Metadata()
	var keys, vals []string
	for i, k := range md.Keys() {
		if h, ok := holders[k]; ok {
			p.reserved[k] = strings.TrimRight(h, " ")
			continue
		}
		keys, vals = append(keys, k), append(vals, md.Values()[i])
	}
	for k, h := range holders {
		if _, ok := p.reserved[k]; !ok {
			p.reserved[k] = strings.TrimRight(h, " ")
		}
	}
	codec := compress.Codecs.Snappy
	if opts.Zstd {
		codec = compress.Codecs.Zstd
	}
	props := parquet.NewWriterProperties(
		parquet.WithAllocator(opts.Allocator),
		parquet.WithCompression(codec),
		parquet.WithMaxRowGroupLength(parquetRowGroup),
		parquet.WithRootRepetition(parquet.Repetitions.Required),
		parquet.WithCreatedBy("pate"),
	)
	base := arrow.NewMetadata(keys, vals)
	fw, err := pqarrow.NewFileWriter(arrow.NewSchema(s.Fields(), &base), sink, props,
		pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(opts.Allocator)))
	if err != nil {
		return nil, fmt.Errorf("parquet output: %w", err)
	}
	p.fw = fw
	return p, nil
}

func (p *parquetOut) write(rec arrow.Record) error {
	if rec.NumRows() == 0 {
		return nil
	}
	rec.Retain()
	p.pending = append(p.pending, rec)
	p.rows += rec.NumRows()
	if p.rows >= parquetRowGroup {
		return p.flush()
	}
	return nil
}

// flush writes the pending batches as row groups of parquetRowGroup rows
// (the last one smaller).
func (p *parquetOut) flush() error {
	if len(p.pending) == 0 {
		return nil
	}
	tbl := array.NewTableFromRecords(p.pending[0].Schema(), p.pending)
	defer tbl.Release()
	p.release()
	if err := p.fw.WriteTable(tbl, parquetRowGroup); err != nil {
		return fmt.Errorf("parquet output: %w", err)
	}
	return nil
}

func (p *parquetOut) release() {
	for _, r := range p.pending {
		r.Release()
	}
	p.pending, p.rows = nil, 0
}

// close writes what is pending and the footer.
func (p *parquetOut) close() error {
	err := p.flush()
	p.release()
	if cerr := p.fw.Close(); err == nil {
		err = cerr
	}
	return err
}

// setFinal appends the reserved keys, with the values of final where it
// has them, and the Arrow schema with the same metadata.
func (p *parquetOut) setFinal(final map[string]string) error {
	p.final = make(map[string]string, len(p.reserved))
	keys := make([]string, 0, len(p.reserved))
	for k := range p.reserved {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, ok := final[k]
		if !ok {
			v = p.reserved[k]
		}
		p.final[k] = v
		if err := p.fw.AppendKeyValueMetadata(k, v); err != nil {
			return fmt.Errorf("parquet metadata %q: %w", k, err)
		}
	}
	md := p.schema.Metadata()
	mk, mv := slices.Clone(md.Keys()), slices.Clone(md.Values())
	for i, k := range mk {
		if v, ok := p.final[k]; ok {
			mv[i] = v
		}
	}
	for _, k := range keys {
		if !slices.Contains(mk, k) {
			mk, mv = append(mk, k), append(mv, p.final[k])
		}
	}
	full := arrow.NewMetadata(mk, mv)
	ser := flight.SerializeSchema(arrow.NewSchema(p.schema.Fields(), &full), p.mem)
	return p.fw.AppendKeyValueMetadata("ARROW:schema", base64.StdEncoding.EncodeToString(ser))
}

// verify re-reads the footer of the finished file and checks the values
// setFinal appended.
func (p *parquetOut) verify(f *os.File, size int64) error {
	pf, err := file.NewParquetReader(io.NewSectionReader(f, 0, size))
	if err != nil {
		return err
	}
	defer pf.Close()
	kv := pf.MetaData().KeyValueMetadata()
	for k, v := range p.final {
		got := kv.FindValue(k)
		if got == nil || *got != v {
			return fmt.Errorf("metadata key %q does not read back", k)
		}
	}
	return nil
}
