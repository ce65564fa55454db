package learners

import (
	"fmt"
	"math"
	"regexp"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
)

// IDMinRows is the fewest non-null values a column must have in the
// sample before IDColumns calls it an identifier: on fewer, a feature's
// values are too often all distinct by chance.
const IDMinRows = 50

// IDCollisions is how many collisions n integers drawn at random from the
// column's range [min, max] would be expected to have, n(n−1)/(2(max−min+1)),
// at or above which n distinct integers are read as a sequence (an
// identifier) rather than a measurement: a feature drawn at random would
// show none with probability at most e^−IDCollisions.
const IDCollisions = 10

// IDColumn is a feature column that IDColumns reads as a row identifier,
// and why.
type IDColumn struct {
	Name string
	Why  string
}

var uuidLike = regexp.MustCompile(`^\{?[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}\}?$`)

// IDColumns returns the named feature columns whose values in the leading
// rows of batches (at most maxRows, DefaultMaxSampleRows when it is not
// positive, as FitEncoder reads; public data) look like row identifiers
// rather than features, in the order of features:
//
//   - a string column whose values are UUIDs (at least 2 of them, every
//     non-null value), or whose IDMinRows or more non-null values are all
//     distinct: a one-hot of values seen once each is noise;
//   - an integer column (or a floating-point one holding only integers)
//     whose IDMinRows or more non-null values are all distinct and so
//     densely packed that random draws from their range would have been
//     expected to repeat IDCollisions times: a sequence, not a
//     measurement.
//
// Dates, times, decimals, booleans and lists are never identifiers. The
// rule reads only the sample it is given, so that it is public when the
// sample is.
func IDColumns(schema *arrow.Schema, features []string, batches []arrow.Record, maxRows int) []IDColumn {
	if maxRows <= 0 {
		maxRows = DefaultMaxSampleRows
	}
	var out []IDColumn
	for _, name := range features {
		idx := schema.FieldIndices(name)
		if len(idx) == 0 {
			continue
		}
		var s idStats
		switch typ := schema.Field(idx[0]).Type; {
		case isInteger(typ.ID()) || typ.ID() == arrow.FLOAT32 || typ.ID() == arrow.FLOAT64 || typ.ID() == arrow.FLOAT16:
			s.numeric = true
		case isStringKind(typ):
		default:
			continue
		}
		s.distinct = map[any]struct{}{}
		left := maxRows
		for _, rec := range batches {
			if left <= 0 || !s.candidate() {
				break
			}
			n := min(int(rec.NumRows()), left)
			left -= n
			ci := rec.Schema().FieldIndices(name)
			if len(ci) == 0 {
				s.broken = true
				break
			}
			s.add(rec.Column(ci[0]), n)
		}
		if why := s.why(); why != "" {
			out = append(out, IDColumn{Name: name, Why: why})
		}
	}
	return out
}

func isInteger(id arrow.Type) bool {
	switch id {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return true
	}
	return false
}

func isStringKind(t arrow.DataType) bool {
	k, err := kindOf(t)
	return err == nil && k == KindString
}

// idStats gathers what IDColumns weighs for one column.
type idStats struct {
	numeric    bool
	n          int
	distinct   map[any]struct{}
	repeated   bool // a value seen twice
	fractional bool // a numeric value that is not an integer
	notUUID    bool // a string value that is no UUID
	broken     bool
	lo, hi     float64
}

// candidate is whether the column may still be an identifier.
func (s *idStats) candidate() bool {
	if s.broken || (s.numeric && (s.repeated || s.fractional)) {
		return false
	}
	return !s.repeated || !s.notUUID
}

func (s *idStats) add(col arrow.Array, n int) {
	if d, ok := col.(*array.Dictionary); ok {
		for i := 0; i < n; i++ {
			if d.IsNull(i) {
				continue
			}
			v, _ := stringAt(d.Dictionary(), d.GetValueIndex(i))
			s.addString(v)
		}
		return
	}
	for i := 0; i < n; i++ {
		if col.IsNull(i) {
			continue
		}
		if !s.numeric {
			v, ok := stringAt(col, i)
			if !ok {
				s.broken = true
				return
			}
			s.addString(v)
			continue
		}
		v, ok := numericAt(col, i)
		if !ok {
			s.broken = true
			return
		}
		if math.IsNaN(v) {
			continue
		}
		if v != math.Trunc(v) || math.IsInf(v, 0) {
			s.fractional = true
			return
		}
		if s.n == 0 || v < s.lo {
			s.lo = v
		}
		if s.n == 0 || v > s.hi {
			s.hi = v
		}
		s.seen(v)
		if s.repeated {
			return
		}
	}
}

func (s *idStats) addString(v string) {
	if !s.notUUID && !uuidLike.MatchString(v) {
		s.notUUID = true
	}
	s.seen(v)
}

func (s *idStats) seen(v any) {
	s.n++
	if s.repeated {
		return
	}
	if _, dup := s.distinct[v]; dup {
		s.repeated = true
		return
	}
	s.distinct[v] = struct{}{}
}

// why says why the column is an identifier, or "" when it is not.
func (s *idStats) why() string {
	switch {
	case s.broken:
		return ""
	case !s.numeric && !s.notUUID && s.n >= 2:
		return fmt.Sprintf("its %d values in the public sample are UUIDs", s.n)
	case !s.numeric && !s.repeated && s.n >= IDMinRows:
		return fmt.Sprintf("its %d values in the public sample are all distinct", s.n)
	case s.numeric && !s.repeated && !s.fractional && s.n >= IDMinRows:
		span := s.hi - s.lo + 1
		if float64(s.n)*float64(s.n-1)/(2*span) >= IDCollisions {
			return fmt.Sprintf("its %d values in the public sample are distinct integers within a span of %.0f: a sequence", s.n, span)
		}
	}
	return ""
}
