package label

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/learners"
)

var encodeSchema = arrow.NewSchema([]arrow.Field{
	{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "emb", Type: arrow.FixedSizeListOf(6, arrow.PrimitiveTypes.Float32), Nullable: true},
}, nil)

// encodeBatch builds rows start… of encodeSchema; with nulls, a null x, s
// and embedding element now and then (which take the encoder's slow path).
func encodeBatch(mem memory.Allocator, start, n int, nulls bool) arrow.Record {
	b := array.NewRecordBuilder(mem, encodeSchema)
	defer b.Release()
	lb := b.Field(2).(*array.FixedSizeListBuilder)
	vb := lb.ValueBuilder().(*array.Float32Builder)
	for i := start; i < start+n; i++ {
		if nulls && i%7 == 3 {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.Float64Builder).Append(float64(i%13) - 4)
		}
		if nulls && i%5 == 1 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append([]string{"a", "b", "c"}[i%3])
		}
		lb.Append(true)
		for j := range 6 {
			if nulls && i%11 == 2 && j == 4 {
				vb.AppendNull()
			} else {
				vb.Append(float32((i*(j+2))%17) / 3)
			}
		}
	}
	return b.NewRecord()
}

// TestSensitiveRowsEncode: a teacher's rows (runs of consecutive rows,
// across batch boundaries, single rows, none), encoded straight from the
// sensitive batches (an embedding alone) or copied from the whole data
// (with numeric and string features), are the rows of the whole data
// encoded batch by batch, bit for bit, with and without nulls.
func TestSensitiveRowsEncode(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, tc := range []struct {
		features []string
		nulls    bool
		fromRows bool // encoded from the batches, no whole matrix
	}{
		{[]string{"emb"}, false, true},
		{[]string{"emb"}, true, true},
		{[]string{"x", "s", "emb"}, false, false},
		{[]string{"x", "s", "emb"}, true, false},
	} {
		nulls := tc.nulls
		sizes := []int{5, 1, 9, 4}
		var recs []arrow.Record
		var starts []int
		total := 0
		for _, n := range sizes {
			recs = append(recs, encodeBatch(mem, total, n, nulls))
			starts = append(starts, total)
			total += n
		}
		enc, err := learners.FitEncoder(encodeSchema, tc.features, recs, learners.EncoderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		dim := enc.Dim()
		whole := learners.NewMatrix(total, dim)
		for bi, rec := range recs {
			p, err := enc.Prepare(rec)
			if err != nil {
				t.Fatal(err)
			}
			lo := starts[bi] * dim
			p.EncodeRows(0, p.Rows(), &learners.Matrix{Data: whole.Data[lo : lo+p.Rows()*dim]})
		}
		l := &Labeler{}
		s, err := l.prepareSensitive(&sensitiveData{recs: recs, starts: starts, total: total}, enc)
		if err != nil {
			t.Fatal(err)
		}
		if (s.whole == nil) != tc.fromRows {
			t.Errorf("features %v: whole matrix %v, want %v", tc.features, s.whole != nil, !tc.fromRows)
		}
		rng := rand.New(rand.NewSource(1))
		all := make([]int, total)
		for i := range all {
			all[i] = i
		}
		random := rng.Perm(total)[:total/2]
		slices.Sort(random)
		for _, rows := range [][]int{
			all,
			{},
			{0},
			{total - 1},
			{4, 5, 6},        // a run across the first boundary
			{5},              // a batch of one row
			{3, 4, 5, 6, 15}, // runs across two boundaries, then the last batch
			random,
		} {
			x := learners.NewMatrix(0, dim)
			x.Data = append(x.Data, 7) // a stale value: encode must overwrite what it keeps
			s.encode(rows, x)
			if x.Rows != len(rows) || len(x.Data) != len(rows)*dim {
				t.Fatalf("%+v rows %v: got %d rows, %d values", tc, rows, x.Rows, len(x.Data))
			}
			for k, r := range rows {
				if !slices.Equal(x.Row(k), whole.Row(r)) {
					t.Errorf("%+v rows %v: row %d (sensitive row %d) = %v, want %v", tc, rows, k, r, x.Row(k), whole.Row(r))
				}
			}
		}
		releaseAll(recs)
	}
}
