package replicate

import (
	"errors"
	"io"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/label"
)

// TestAgreement: an abstention is a label; the disagreement is counted by
// kind and its Wilson interval holds the rate.
func TestAgreement(t *testing.T) {
	tests := []struct {
		name                 string
		x, y                 []string
		differ, abst, labels int
	}{
		{"same", []string{"0", "1", ""}, []string{"0", "1", ""}, 0, 0, 0},
		{"mixed", []string{"0", "1", "", "1"}, []string{"1", "1", "0", ""}, 3, 2, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var a Agreement
			a.compare(tc.x, tc.y)
			a.finish()
			if a.Differ != tc.differ || a.AnswerVsAbstain != tc.abst || a.LabelVsLabel != tc.labels || a.Compared != len(tc.x) {
				t.Errorf("%+v, want %d differing (%d answer vs abstention, %d label vs label) of %d", a, tc.differ, tc.abst, tc.labels, len(tc.x))
			}
			if !(a.Low <= a.Rate+1e-12 && a.Rate <= a.High && a.Low >= 0 && a.High <= 1) { // rounding: Wilson's low end at 0 of n is about 1e-17
				t.Errorf("interval [%g, %g] around %g", a.Low, a.High, a.Rate)
			}
		})
	}
}

// TestParamError: a parameter's error reads as the command line's, and an
// error in the input matches label.ErrInvalidInput while a usage mistake
// does not.
func TestParamError(t *testing.T) {
	cause := errors.New("no such file")
	tests := []struct {
		name      string
		err       *ParamError
		want      string
		invalid   bool
		wrapCause bool
	}{
		{"usage", &ParamError{Param: "report-epsilon", Detail: "ε must be positive", Usage: true}, "--report-epsilon: ε must be positive", false, false},
		{"input", &ParamError{Param: "truth", Value: "y", Detail: "3 values for 4 public rows"}, "invalid input: --truth y: 3 values for 4 public rows", true, false},
		{"cause", &ParamError{Param: "public", Err: cause}, "--public: no such file", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("%q, want %q", got, tc.want)
			}
			if got := errors.Is(tc.err, label.ErrInvalidInput); got != tc.invalid {
				t.Errorf("errors.Is(ErrInvalidInput) = %v", got)
			}
			if got := errors.Is(tc.err, cause); got != tc.wrapCause {
				t.Errorf("errors.Is(cause) = %v", got)
			}
		})
	}
}

type batches struct {
	schema *arrow.Schema
	recs   []arrow.Record
}

func (b *batches) Schema() *arrow.Schema { return b.schema }
func (b *batches) Read() (arrow.Record, error) {
	if len(b.recs) == 0 {
		return nil, io.EOF
	}
	r := b.recs[0]
	b.recs = b.recs[1:]
	return r, nil
}

// TestReadAll: the batches are concatenated in order, with nulls, and no
// input gives an empty record; nothing leaks.
func TestReadAll(t *testing.T) {
	tests := []struct {
		name    string
		batches [][]int64 // -1 is a null
		want    string
	}{
		{"none", nil, "[]"},
		{"two", [][]int64{{1, 2}, {-1, 4}}, "[1 2 (null) 4]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
			in := &batches{schema: schema}
			for _, vals := range tc.batches {
				b := array.NewInt64Builder(mem)
				for _, v := range vals {
					if v < 0 {
						b.AppendNull()
					} else {
						b.Append(v)
					}
				}
				col := b.NewArray()
				b.Release()
				in.recs = append(in.recs, array.NewRecord(schema, []arrow.Array{col}, int64(col.Len())))
				col.Release()
			}
			rec, err := ReadAll(mem, in)
			if err != nil {
				t.Fatal(err)
			}
			defer rec.Release()
			if got := rec.Column(0).String(); got != tc.want {
				t.Errorf("%s, want %s", got, tc.want)
			}
		})
	}
}
