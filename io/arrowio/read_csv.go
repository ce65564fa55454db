package arrowio

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// csvInferRows is how many data rows are looked at to infer column types.
const csvInferRows = 10000

// csvRow is one parsed CSV record and its line number.
type csvRow struct {
	fields []string
	line   int
}

type csvSource struct {
	name     string
	r        *csv.Reader
	mem      memory.Allocator
	sch      *arrow.Schema
	batch    int
	buffered []csvRow // rows read for inference and not yet returned
	done     bool

	// declared: the types come from ReadOptions.CSVTypes, and values
	// that do not fit are counted, not errors.
	declared   bool
	width      int   // number of header fields
	badRecords int64 // records skipped for their number of fields
	badCells   int64 // cells read as null because they did not parse
}

// openCSV reads the header and up to csvInferRows rows to infer each
// column's type: int64 if every non-empty value is an integer, else float64
// if every one is a number, else bool if every one is true or false, else
// string. Empty values are nulls; every column is nullable.
func openCSV(in io.Reader, name string, opts ReadOptions) (source, error) {
	r := csv.NewReader(in)
	header, err := r.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: csv input has no header row: %w", name, ErrFormat)
		}
		return nil, fmt.Errorf("%s: csv header: %w: %w", name, ErrFormat, err)
	}
	header = append([]string(nil), header...)
	header[0] = strings.TrimPrefix(header[0], "\ufeff")
	s := &csvSource{name: name, r: r, mem: opts.Allocator, batch: opts.BatchSize, width: len(header)}
	if opts.CSVTypes != nil {
		return openDeclaredCSV(s, header, opts.CSVTypes, opts.CSVDefault)
	}
	for len(s.buffered) < csvInferRows {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			s.done = true
			break
		}
		if err != nil {
			return nil, s.parseErr(err)
		}
		line, _ := r.FieldPos(0)
		s.buffered = append(s.buffered, csvRow{fields: rec, line: line})
	}
	fields := make([]arrow.Field, len(header))
	for j, h := range header {
		if h == "" {
			h = fmt.Sprintf("column_%d", j+1)
		}
		fields[j] = arrow.Field{Name: h, Type: inferCSVType(s.buffered, j), Nullable: true}
	}
	s.sch = arrow.NewSchema(fields, nil)
	return s, nil
}

// openDeclaredCSV sets the schema from the declared types alone: no row
// is read before the caller asks for one, so neither the schema nor
// whether the file opens depends on the values.
func openDeclaredCSV(s *csvSource, header []string, types map[string]arrow.DataType, def arrow.DataType) (source, error) {
	if def == nil {
		def = arrow.BinaryTypes.String
	}
	s.declared = true
	s.r.FieldsPerRecord = -1 // a record of the wrong width is skipped in next
	s.r.LazyQuotes = true
	fields := make([]arrow.Field, len(header))
	for j, h := range header {
		if h == "" {
			h = fmt.Sprintf("column_%d", j+1)
		}
		t, ok := types[h]
		if !ok {
			t = def
		}
		switch t.ID() {
		case arrow.INT64, arrow.FLOAT64, arrow.BOOL, arrow.STRING:
		default:
			return nil, fmt.Errorf("%s: column %q: a csv column cannot be declared %s (int64, float64, bool or utf8)", s.name, h, t)
		}
		fields[j] = arrow.Field{Name: h, Type: t, Nullable: true}
	}
	s.sch = arrow.NewSchema(fields, nil)
	return s, nil
}

func (s *csvSource) skipped() (int64, int64) { return s.badRecords, s.badCells }

func (s *csvSource) parseErr(err error) error {
	return fmt.Errorf("%s: csv: %w: %w", s.name, ErrFormat, err)
}

func inferCSVType(rows []csvRow, j int) arrow.DataType {
	isInt, isFloat, isBool, any := true, true, true, false
	for _, row := range rows {
		v := strings.TrimSpace(row.fields[j])
		if v == "" {
			continue
		}
		any = true
		if isInt {
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				isInt = false
			}
		}
		if isFloat && !isInt {
			if _, err := strconv.ParseFloat(v, 64); err != nil && !isRangeErr(err) {
				isFloat = false
			}
		}
		if isBool {
			if _, ok := parseCSVBool(v); !ok {
				isBool = false
			}
		}
		if !isInt && !isFloat && !isBool {
			break
		}
	}
	switch {
	case !any:
		return arrow.BinaryTypes.String
	case isInt:
		return arrow.PrimitiveTypes.Int64
	case isFloat:
		return arrow.PrimitiveTypes.Float64
	case isBool:
		return arrow.FixedWidthTypes.Boolean
	}
	return arrow.BinaryTypes.String
}

func isRangeErr(err error) bool {
	var ne *strconv.NumError
	return errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange)
}

func parseCSVBool(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

func (s *csvSource) schema() *arrow.Schema { return s.sch }
func (s *csvSource) numRows() int64        { return -1 }
func (s *csvSource) close() error          { return nil }

func (s *csvSource) next() (arrow.Record, error) {
	b := array.NewRecordBuilder(s.mem, s.sch)
	defer b.Release()
	rows := 0
	for rows < s.batch {
		var row csvRow
		switch {
		case len(s.buffered) > 0:
			row = s.buffered[0]
			s.buffered[0] = csvRow{}
			s.buffered = s.buffered[1:]
		case s.done:
		default:
			rec, err := s.r.Read()
			if errors.Is(err, io.EOF) {
				s.done = true
				break
			}
			if err != nil {
				return nil, s.parseErr(err)
			}
			row.fields = rec
			row.line, _ = s.r.FieldPos(0)
			if s.declared && len(rec) != s.width {
				s.badRecords++
				continue
			}
		}
		if row.fields == nil {
			break
		}
		if err := s.appendRow(b, row); err != nil {
			return nil, err
		}
		rows++
	}
	if rows == 0 {
		return nil, io.EOF
	}
	return b.NewRecord(), nil
}

func (s *csvSource) appendRow(b *array.RecordBuilder, row csvRow) error {
	for j, raw := range row.fields {
		v := strings.TrimSpace(raw)
		fb := b.Field(j)
		if v == "" {
			fb.AppendNull()
			continue
		}
		bad := false
		switch fb := fb.(type) {
		case *array.Int64Builder:
			x, err := strconv.ParseInt(v, 10, 64)
			if bad = err != nil; !bad {
				fb.Append(x)
			}
		case *array.Float64Builder:
			x, err := strconv.ParseFloat(v, 64)
			if bad = err != nil && !isRangeErr(err); !bad {
				fb.Append(x)
			}
		case *array.BooleanBuilder:
			x, ok := parseCSVBool(v)
			if !ok && s.declared {
				var err error
				x, err = strconv.ParseBool(v)
				ok = err == nil
			}
			if bad = !ok; !bad {
				fb.Append(x)
			}
		case *array.StringBuilder:
			fb.Append(raw)
		}
		if !bad {
			continue
		}
		if s.declared { // a value that does not fit its declared type is missing
			fb.AppendNull()
			s.badCells++
			continue
		}
		return fmt.Errorf("%s: line %d, column %q: %q is not %s (type inferred from the first %d rows): %w",
			s.name, row.line, s.sch.Field(j).Name, raw, s.sch.Field(j).Type, csvInferRows, ErrFormat)
	}
	return nil
}
