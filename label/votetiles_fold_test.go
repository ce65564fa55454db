package label

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/learners"
)

// TestVoteTilesFoldsEmbedding: on a batch whose one feature is a float32
// embedding (fixed_size_list, and a list with regular offsets as DuckDB's
// FLOAT[n] reads back), voteTiles votes with the folded teachers on Arrow's
// buffer: its votes are those of the folded path in one call (the tiles
// change nothing), the rows holding a NaN or an infinity get exactly the
// encoded path's votes, and the other rows the encoded path's votes but
// for a few near-ties; for one and for two label columns.
func TestVoteTilesFoldsEmbedding(t *testing.T) {
	const dim, rows = 48, 3000
	f32 := arrow.PrimitiveTypes.Float32
	tests := []struct {
		name    string
		typ     arrow.DataType
		classes []int // per label column
	}{
		{"fixed_size_list", arrow.FixedSizeListOf(dim, f32), []int{2}},
		{"list, regular offsets", arrow.ListOf(f32), []int{2}},
		{"two label columns", arrow.FixedSizeListOf(dim, f32), []int{2, 3}},
	}
	for ti, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			rng := rand.New(rand.NewPCG(41, uint64(ti)))
			// NaN, +Inf or -Inf in every 97th row after the encoder's
			// sample (a NaN in the sample adds missing-indicator
			// columns, which the folded teachers cannot read in place).
			special := func(r int) float64 {
				if r < 600 || r%97 != 5 {
					return 0
				}
				return []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[r%3]
			}
			rec := foldTestRecord(mem, tc.typ, dim, rows, rng, special)
			s := rec.Schema()
			defer rec.Release()

			enc, err := learners.FitEncoder(s, []string{"emb"}, []arrow.Record{rec}, learners.EncoderOptions{MaxSampleRows: 500})
			if err != nil {
				t.Fatal(err)
			}
			x := learners.NewMatrix(0, enc.Dim())
			fitRows := rec.NewSlice(0, 600)
			err = enc.Encode(fitRows, x)
			fitRows.Release()
			if err != nil {
				t.Fatal(err)
			}
			var ens []*learners.Ensemble
			for _, classes := range tc.classes {
				ens = append(ens, logregTeachers(t, x, classes, 15, func(r int) int32 { // 40 rows each
					row := x.Row(r)
					switch {
					case classes == 3 && row[3] > 0.5:
						return 2
					case row[0]+row[1]-row[2] > 0:
						return 1
					}
					return 0
				}))
			}

			st := &runState{enc: enc, ens: ens[0]}
			st.tileBufs.New = func() any { return new([]float32) }
			if len(ens) > 1 {
				for _, e := range ens {
					st.labels = append(st.labels, &labelRun{labelData: &labelData{ens: e}})
				}
			}
			stacked := st.stacked()
			if len(stacked) != len(ens) {
				t.Fatalf("stacked() has %d ensembles, want %d", len(stacked), len(ens))
			}
			b := &batch{rec: rec, queryN: rows, counts: make([]int32, rows*ens[0].Classes())}
			for _, e := range ens[1:] {
				b.more = append(b.more, labelVotes{counts: make([]int32, rows*e.Classes())})
			}
			if err := st.voteTiles(rec, stacked, b); err != nil {
				t.Fatal(err)
			}
			if len(st.folds) != len(ens) {
				t.Fatal("voteTiles did not fold the teachers of an embedding")
			}

			p, err := enc.Prepare(rec)
			if err != nil {
				t.Fatal(err)
			}
			raw := p.Raw(st.folds)
			if raw == nil {
				t.Fatal("the batch cannot be voted on in place")
			}
			oneCall := make([][]int32, len(ens))
			for j, e := range ens {
				oneCall[j] = make([]int32, rows*e.Classes())
			}
			raw.Votes(0, rows, oneCall, make([]float32, dim*rows))
			xc := make([]float32, dim*rows)
			p.EncodeColumns(0, rows, xc, rows)
			checkFoldedVotes(t, ens, b, oneCall, xc, rows, special)
		})
	}
}

// foldTestRecord builds rows embeddings of dim float32s of type typ, with
// special(r) written into element r%dim of row r where it is not 0.
func foldTestRecord(mem memory.Allocator, typ arrow.DataType, dim, rows int, rng *rand.Rand, special func(int) float64) arrow.Record {
	s := arrow.NewSchema([]arrow.Field{{Name: "emb", Type: typ, Nullable: true}}, nil)
	rb := array.NewRecordBuilder(mem, s)
	lb := rb.Field(0).(array.ListLikeBuilder)
	vb := lb.ValueBuilder().(*array.Float32Builder)
	for r := 0; r < rows; r++ {
		lb.Append(true)
		for j := 0; j < dim; j++ {
			v := 0.02*float64(j) + 0.1*rng.NormFloat64()
			if j == r%dim && special(r) != 0 {
				v = special(r)
			}
			vb.Append(float32(v))
		}
	}
	defer rb.Release()
	return rb.NewRecord()
}

// checkFoldedVotes holds the tiled votes (b) to the folded votes in one call
// exactly, and to the encoded path except at near-ties; rows holding a
// special value must match the encoded path exactly.
func checkFoldedVotes(t *testing.T, ens []*learners.Ensemble, b *batch, oneCall [][]int32, xc []float32, rows int, special func(int) float64) {
	t.Helper()
	for j, e := range ens {
		got := b.counts
		if j > 0 {
			got = b.more[j-1].counts
		}
		if !slices.Equal(got, oneCall[j]) {
			t.Fatalf("label %d: tiled votes differ from the folded votes in one call", j)
		}
		k := e.Classes()
		encoded := make([]int32, rows*k)
		e.VotesColumns(xc, rows, rows, encoded)
		differ, split := 0, 0
		for r := 0; r < rows; r++ {
			g, w := got[r*k:(r+1)*k], encoded[r*k:(r+1)*k]
			if slices.Max(w) < int32(e.Teachers()) {
				split++
			}
			if slices.Equal(g, w) {
				continue
			}
			if special(r) != 0 {
				t.Fatalf("label %d, row %d holds %v: votes %v, want exactly the encoded path's %v", j, r, special(r), g, w)
			}
			differ++
		}
		if split < rows/20 {
			t.Fatalf("label %d: only %d of %d rows have split votes: the test data are too weak", j, split, rows)
		}
		if differ > rows/100 {
			t.Errorf("label %d: %d of %d rows differ from the encoded path, want near-ties only (at most 1%%)", j, differ, rows)
		}
	}
}
