package learners

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/bitutil"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/learners/kernel"
)

// embeddingRows builds a record of one list column c of type typ with
// rows rows of dim values: value j of a row is mean_j + std_j·N(0, 1),
// where mean_j and std_j vary around mean and std. special(r, j) may
// replace a value (ok false: a null element); width(r) may change a row's
// length (-1: a null row).
func embeddingRows(mem memory.Allocator, typ arrow.DataType, rng *rand.Rand, rows, dim int, mean, std float64,
	special func(r, j int) (float64, bool, bool), width func(r int) int) arrow.Record {
	means, stds := make([]float64, dim), make([]float64, dim)
	for j := range means {
		means[j] = mean * (1 + 0.5*math.Sin(float64(j)))
		stds[j] = std * (0.5 + float64(j%5)/4)
	}
	return oneColumn(mem, typ, func(b array.Builder) {
		lb := b.(array.ListLikeBuilder)
		vb := lb.ValueBuilder().(*array.Float32Builder)
		for r := 0; r < rows; r++ {
			n := dim
			if width != nil {
				n = width(r)
			}
			if n < 0 {
				lb.AppendNull()
				continue
			}
			lb.Append(true)
			for j := 0; j < n; j++ {
				v := means[j%dim] + stds[j%dim]*rng.NormFloat64()
				if special != nil {
					if s, valid, ok := special(r, j); ok {
						if !valid {
							vb.AppendNull()
							continue
						}
						v = s
					}
				}
				vb.Append(float32(v))
			}
		}
	})
}

// randomTeachers returns k linear teachers with N(0, 1) weights and biases
// on standardised features, the last one predicting class 1 whatever the
// row (its other classes have absentBias) and, with three classes or more,
// every fourth never predicting class 0 or, every fifth, the last class (as
// teachers whose partitions lack it).
func randomTeachers(rng *rand.Rand, k, classes, dim int) []Model {
	models := make([]Model, k)
	for t := range models {
		if t == k-1 {
			models[t] = constantLinear(classes, dim, 1)
			continue
		}
		m := &linearModel{classes: classes, dim: dim, w: make([]float32, classes*dim), b: make([]float32, classes)}
		for i := range m.w {
			m.w[i] = float32(rng.NormFloat64())
		}
		for i := range m.b {
			m.b[i] = float32(rng.NormFloat64())
		}
		if classes >= 3 {
			for c := range m.b {
				if t%4 == 1 && c == 0 || t%5 == 2 && c == classes-1 {
					m.b[c] = absentBias
					clear(m.w[c*dim : (c+1)*dim])
				}
			}
		}
		models[t] = m
	}
	return models
}

// encodedVotes is today's path: the rows encoded column-major and voted on
// by the stacked teachers.
func encodedVotes(t *testing.T, p *Prepared, e *Ensemble) []int32 {
	t.Helper()
	n := p.Rows()
	x := make([]float32, p.e.Width*n)
	p.EncodeColumns(0, n, x, n)
	counts := make([]int32, n*e.Classes())
	e.VotesColumns(x, n, n, counts)
	return counts
}

// nearTies returns the number of teachers whose two best classes' exact
// scores on row r (float64, on the raw values: Σ_j dw_j·(x_j − m_j)/s_j + db
// relative to the first class the teacher predicts, r) are within twice the
// float32 rounding bound of either path of each other: (dim+8)·2⁻²³ times
// the sum of the magnitudes both paths add (|dw_j|·(|x_j| + 2|m_j| + |x_j −
// m_j|)/s_j and the biases). Classes a teacher never predicts score −Inf.
func nearTies(models []Model, enc *Encoder, row []float32) int {
	dim := enc.Width
	near := 0
	for _, m := range models {
		w, b := m.(LinearModel).Linear()
		classes := len(b)
		scores := make([]float64, classes)
		r := 0
		for r < classes-1 && absent(b[r]) {
			r++
		}
		tol := 0.0
		for c := range scores {
			if c == r {
				continue // scores 0
			}
			if absent(b[c]) {
				scores[c] = math.Inf(-1)
				continue
			}
			db := float64(b[c]) - float64(b[r])
			s, mag := db, 2*math.Abs(db)
			for j := 0; j < dim; j++ {
				f := &enc.Columns[j]
				dw := float64(w[c*dim+j]) - float64(w[r*dim+j])
				x := float64(row[j])
				s += dw * (x - f.Mean) / f.Std
				mag += math.Abs(dw) * (math.Abs(x) + 2*math.Abs(f.Mean) + math.Abs(x-f.Mean)) / f.Std
			}
			scores[c] = s
			tol = max(tol, float64(dim+8)*0x1p-23*mag)
		}
		slices.Sort(scores)
		if scores[classes-1]-scores[classes-2] <= 2*tol {
			near++
		}
	}
	return near
}

// checkVotes compares the folded path's counts with the encoded path's on
// the rows of raw (the values of rec's list column): each row's counts
// must be equal but for teachers on a near-tie, and exactly equal on the
// rows exact says. It returns the number of rows whose counts differ.
func checkVotes(t *testing.T, models []Model, enc *Encoder, rec arrow.Record, got, want []int32, classes int, exact func(r int) bool) int {
	t.Helper()
	list := rec.Column(0).(listArray)
	vals := list.ListValues().(*array.Float32).Float32Values()
	differ := 0
	for r := 0; r < int(rec.NumRows()); r++ {
		g, w := got[r*classes:(r+1)*classes], want[r*classes:(r+1)*classes]
		total := int32(0)
		for _, c := range g {
			total += c
		}
		if total != int32(len(models)) {
			t.Fatalf("row %d: %d votes, want one per teacher (%d)", r, total, len(models))
		}
		if slices.Equal(g, w) {
			continue
		}
		differ++
		if exact != nil && exact(r) {
			t.Fatalf("row %d takes the encoded path: votes %v, want exactly %v", r, g, w)
		}
		moved := 0
		for c := range g {
			moved += int(max(g[c]-w[c], w[c]-g[c]))
		}
		s, _ := list.ValueOffsets(r)
		if near := nearTies(models, enc, vals[s:s+int64(enc.Width)]); moved/2 > near {
			t.Fatalf("row %d: votes %v, encoded path %v: %d teachers changed their vote, %d are on a near-tie", r, g, w, moved/2, near)
		}
	}
	return differ
}

// TestFoldedVotesMatchEncoded: the folded teachers voting on the raw list
// values give the encoded path's votes on every row but where a teacher's
// margin is within float32 rounding of a tie, for several widths, scales
// and means (also far from 0 and 1, and far from 0 in units of the
// standard deviation), list layouts, two and three classes, and slices.
func TestFoldedVotesMatchEncoded(t *testing.T) {
	f32 := arrow.PrimitiveTypes.Float32
	tests := []struct {
		name      string
		dim       int
		typ       arrow.DataType
		mean, std float64
		classes   int
		maxDiffer float64 // the most rows whose counts may differ, as a share
	}{
		{"dim 1 standard", 1, arrow.FixedSizeListOf(1, f32), 0, 1, 2, 0.01},
		{"dim 7 list", 7, arrow.ListOf(f32), 0.3, 2, 2, 0.01},
		{"dim 64 large_list three classes", 64, arrow.LargeListOf(f32), -1, 0.5, 3, 0.02},
		{"dim 384 embedding scale", 384, arrow.FixedSizeListOf(384, f32), 0.01, 0.05, 2, 0.02},
		{"dim 384 list", 384, arrow.ListOf(f32), 0.01, 0.05, 3, 0.02},
		{"dim 384 large values", 384, arrow.FixedSizeListOf(384, f32), 3e4, 1e4, 2, 0.02},
		{"dim 384 tiny values", 384, arrow.FixedSizeListOf(384, f32), 2e-6, 1e-6, 2, 0.02},
		{"dim 384 mean 100 std far off", 384, arrow.FixedSizeListOf(384, f32), 100, 1, 2, 0.2},
		{"dim 64 mean 20 std 0.1", 64, arrow.FixedSizeListOf(64, f32), 20, 0.1, 2, 0.1},
		{"dim 384 means up to 900 std", 384, arrow.ListOf(f32), 300, 1, 3, 0.1},
	}
	for ti, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			rng := rand.New(rand.NewPCG(11, uint64(ti)))
			fit := embeddingRows(mem, tc.typ, rng, 400, tc.dim, tc.mean, tc.std, nil, nil)
			defer fit.Release()
			enc, err := FitEncoder(fit.Schema(), []string{"c"}, []arrow.Record{fit}, EncoderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			models := randomTeachers(rng, 41, tc.classes, tc.dim)
			e, err := NewEnsemble(models, tc.classes)
			if err != nil {
				t.Fatal(err)
			}
			f := e.Fold(enc)
			if f == nil {
				t.Fatal("Fold refused an encoder of one float32 list column")
			}
			rec := embeddingRows(mem, tc.typ, rng, 700, tc.dim, tc.mean, tc.std, nil, nil)
			defer rec.Release()
			for _, sl := range []struct{ lo, hi int64 }{{0, rec.NumRows()}, {13, 611}} {
				part := rec.NewSlice(sl.lo, sl.hi)
				p, err := enc.Prepare(part)
				if err != nil {
					part.Release()
					t.Fatal(err)
				}
				raw := p.Raw([]*FoldedEnsemble{f})
				if raw == nil {
					part.Release()
					t.Fatal("Raw refused a batch of one float32 list column")
				}
				n := p.Rows()
				got := make([]int32, n*tc.classes)
				raw.Votes(0, n, [][]int32{got}, make([]float32, tc.dim*n))
				want := encodedVotes(t, p, e)
				differ := checkVotes(t, models, enc, part, got, want, tc.classes, nil)
				t.Logf("rows %d–%d: %d of %d rows differ", sl.lo, sl.hi, differ, n)
				if float64(differ) > tc.maxDiffer*float64(n) {
					t.Errorf("rows %d–%d: %d of %d rows differ from the encoded path, want at most %.0f%%", sl.lo, sl.hi, differ, n, 100*tc.maxDiffer)
				}
				part.Release()
			}
		})
	}
}

// TestFoldedFallsBack: a row holding a NaN, an infinity or a null
// element, a null row and a row of another length are encoded and voted
// on by the teachers themselves, giving exactly today's votes, while the
// clean rows of the same batch are voted on in place; a batch of such rows
// only gives exactly today's votes on every row. The same with the encoder
// fitted on the batch itself, which then has the list's missing indicator
// (but for the infinities, which are not missing): the rows voted on in
// place are those whose indicator is 0.
func TestFoldedFallsBack(t *testing.T) {
	const dim = 24
	f32 := arrow.PrimitiveTypes.Float32
	nan, inf := math.NaN(), math.Inf(1)
	every := func(v float64) func(r, j int) (float64, bool, bool) {
		return func(r, j int) (float64, bool, bool) { return v, true, j == r%dim }
	}
	tests := []struct {
		name    string
		typ     arrow.DataType
		special func(r, j int) (float64, bool, bool)
		width   func(r int) int
		bad     func(r int) bool // the rows that must take the encoded path
	}{
		{"NaN", arrow.FixedSizeListOf(dim, f32),
			func(r, j int) (float64, bool, bool) { return nan, true, r%7 == 2 && j == 5 },
			nil, func(r int) bool { return r%7 == 2 }},
		{"+Inf and -Inf", arrow.ListOf(f32),
			func(r, j int) (float64, bool, bool) { return []float64{inf, -inf}[r%2], true, r%5 < 2 && j == dim-1 },
			nil, func(r int) bool { return r%5 < 2 }},
		{"null elements", arrow.FixedSizeListOf(dim, f32),
			func(r, j int) (float64, bool, bool) { return 0, false, r%9 == 4 && j == 0 },
			nil, func(r int) bool { return r%9 == 4 }},
		{"null rows", arrow.LargeListOf(f32), nil,
			func(r int) int { return map[bool]int{true: -1, false: dim}[r%6 == 1] },
			func(r int) bool { return r%6 == 1 }},
		{"null rows of a fixed_size_list", arrow.FixedSizeListOf(dim, f32), nil,
			func(r int) int { return map[bool]int{true: -1, false: dim}[r%4 == 3] },
			func(r int) bool { return r%4 == 3 }},
		{"null rows over valid values", arrow.FixedSizeListOf(dim, f32), nil, nil,
			func(r int) bool { return r%4 == 1 }},
		{"short, long and empty lists", arrow.ListOf(f32), nil,
			func(r int) int { return []int{dim, dim, dim - 3, dim + 2, 0, dim}[r%6] },
			func(r int) bool { return r%6 >= 2 && r%6 <= 4 }},
		{"every row NaN", arrow.FixedSizeListOf(dim, f32), every(nan), nil, func(int) bool { return true }},
		{"every row -Inf", arrow.ListOf(f32), every(-inf), nil, func(int) bool { return true }},
	}
	for ti, tc := range tests {
		for _, onBatch := range []bool{false, true} {
			if onBatch && tc.width != nil && tc.name == "short, long and empty lists" {
				continue // fitted on them, the width would be their longest
			}
			t.Run(tc.name+map[bool]string{true: "/fitted on the batch"}[onBatch], func(t *testing.T) {
				fallsBack(t, tc.typ, dim, uint64(ti), onBatch, tc.special, tc.width, tc.bad)
			})
		}
	}
}

// fallsBack is one case of TestFoldedFallsBack.
func fallsBack(t *testing.T, typ arrow.DataType, dim int, seed uint64, onBatch bool, special func(r, j int) (float64, bool, bool), width func(r int) int, isBad func(r int) bool) {
	{
		{
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			rng := rand.New(rand.NewPCG(21, seed))
			fit := embeddingRows(mem, typ, rng, 300, dim, 0.5, 2, nil, nil)
			defer fit.Release()
			rec := embeddingRows(mem, typ, rng, 500, dim, 0.5, 2, special, width)
			defer rec.Release()
			if special == nil && width == nil { // null rows whose values are there
				nulled := withNullRows(mem, rec, isBad)
				defer nulled.Release()
				rec = nulled
			}
			if onBatch {
				fit = rec
			}
			enc, err := FitEncoder(fit.Schema(), []string{"c"}, []arrow.Record{fit}, EncoderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if onBatch {
				a := fit.Column(0).(listArray)
				missing := false
				for r := 0; r < a.Len(); r++ {
					missing = missing || listMissingAt(a, a.ListValues(), r, dim)
				}
				if want := map[bool]int{false: dim, true: dim + 1}[missing]; enc.Dim() != want {
					t.Fatalf("fitted on the batch (a missing element: %v): dim %d, want %d", missing, enc.Dim(), want)
				}
			}
			const classes = 3
			models := randomTeachers(rng, 37, classes, enc.Dim())
			e, err := NewEnsemble(models, classes)
			if err != nil {
				t.Fatal(err)
			}
			f := e.Fold(enc)
			if f == nil {
				t.Fatal("Fold refused")
			}
			const lo = 3 // a slice: row r of it is row r+lo of rec
			part := rec.NewSlice(lo, rec.NumRows()-2)
			defer part.Release()
			p, err := enc.Prepare(part)
			if err != nil {
				t.Fatal(err)
			}
			raw := p.Raw([]*FoldedEnsemble{f})
			if raw == nil {
				t.Fatal("Raw refused a float32 list column")
			}
			n := p.Rows()
			want := encodedVotes(t, p, e)
			// A row with a value outside the fitted range is encoded too
			// (the encoded path clamps it).
			bad := func(r int) bool { return isBad(r+lo) || outsideRange(enc, part, r) }
			// A marker whose folded teachers all vote for class 2 shows
			// which path each row took: the teachers themselves never
			// all do (the last one always votes 1).
			w := make([]float32, len(models)*classes*dim)
			b := make([]float32, len(models)*classes)
			for k := range models {
				b[k*classes+2] = 1
			}
			lin, err := kernel.NewLinear(len(models), classes, dim, w, b)
			if err != nil {
				t.Fatal(err)
			}
			marker := &FoldedEnsemble{e: e, enc: enc, lin: lin, dim: dim}
			// In tiles, as voteTiles calls it, and in one call.
			for _, tile := range []int{n, 17} {
				got := make([]int32, n*classes)
				marked := make([]int32, n*classes)
				scratch := make([]float32, enc.Dim()*tile)
				rb := p.Raw([]*FoldedEnsemble{f, marker})
				for s := 0; s < n; s += tile {
					h := min(n, s+tile)
					rb.Votes(s, h, [][]int32{got[s*classes : h*classes], marked[s*classes : h*classes]}, scratch)
				}
				checkVotes(t, models, enc, part, got, want, classes, bad)
				for r := 0; r < n; r++ {
					inPlace := marked[r*classes+2] == int32(len(models))
					if inPlace == bad(r) {
						t.Fatalf("tile %d, row %d: voted on in place %v, want %v", tile, r, inPlace, !bad(r))
					}
				}
			}
		}
	}
}

// outsideRange reports whether row r of rec's list column holds a
// non-null, non-NaN value outside its element's fitted range [Min, Max].
func outsideRange(enc *Encoder, rec arrow.Record, r int) bool {
	a := rec.Column(0).(listArray)
	if a.IsNull(r) {
		return false
	}
	vals, ok := a.ListValues().(*array.Float32)
	if !ok {
		return false
	}
	s, e := a.ValueOffsets(r)
	for j := s; j < e && int(j-s) < len(enc.Columns) && enc.Columns[j-s].Kind == KindNumeric; j++ {
		if vals.IsNull(int(j)) {
			continue
		}
		v, f := float64(vals.Value(int(j))), &enc.Columns[j-s]
		if v < f.Min || v > f.Max {
			return true
		}
	}
	return false
}

// newEnsembleMust returns a stacked ensemble of 4 random linear teachers
// of 2 classes on dim features.
func newEnsembleMust(t *testing.T, rng *rand.Rand, dim int) *Ensemble {
	t.Helper()
	e, err := NewEnsemble(randomTeachers(rng, 4, 2, dim), 2)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// withNullRows returns rec with the rows null marks null in its validity
// bitmap, their values left as they are.
func withNullRows(mem memory.Allocator, rec arrow.Record, null func(r int) bool) arrow.Record {
	n := int(rec.NumRows())
	bitmap := memory.NewResizableBuffer(mem)
	defer bitmap.Release()
	bitmap.Resize(int(bitutil.BytesForBits(int64(n))))
	nulls := 0
	for r := 0; r < n; r++ {
		bitutil.SetBitTo(bitmap.Bytes(), r, !null(r))
		if null(r) {
			nulls++
		}
	}
	d := rec.Column(0).Data()
	nd := array.NewData(d.DataType(), n, []*memory.Buffer{bitmap}, d.Children(), nulls, 0)
	defer nd.Release()
	col := array.MakeFromData(nd)
	defer col.Release()
	return array.NewRecord(rec.Schema(), []arrow.Array{col}, int64(n))
}

// TestFoldRefuses: Fold gives nil, and the caller encodes, for teachers
// that are not stacked, for features other than one list column, for a
// list element with a missing indicator, and for weights that overflow
// float32 once divided by the standard deviation; Raw gives nil for a
// float64 list.
func TestFoldRefuses(t *testing.T) {
	const dim = 5
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(31, 1))
	f32 := arrow.PrimitiveTypes.Float32
	fit := embeddingRows(mem, arrow.FixedSizeListOf(dim, f32), rng, 100, dim, 0, 1, nil, nil)
	defer fit.Release()
	enc, err := FitEncoder(fit.Schema(), []string{"c"}, []arrow.Record{fit}, EncoderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stacked, err := NewEnsemble(randomTeachers(rng, 4, 2, dim), 2)
	if err != nil {
		t.Fatal(err)
	}
	if stacked.Fold(enc) == nil {
		t.Fatal("Fold refused a foldable ensemble: the cases below prove nothing")
	}

	// An element with a missing indicator of its own (as encoders stored
	// by earlier versions have them).
	missing := &Encoder{Columns: slices.Clone(enc.Columns), Width: dim + 1}
	missing.Columns[2].Missing, missing.Columns[2].Width = true, 2
	for i := 3; i < dim; i++ {
		missing.Columns[i].Offset++
	}
	wide, err := NewEnsemble(randomTeachers(rng, 4, 2, missing.Dim()), 2)
	if err != nil {
		t.Fatal(err)
	}
	// A list's indicator that is not the run's.
	withNaN := embeddingRows(mem, arrow.FixedSizeListOf(dim, f32), rng, 100, dim, 0, 1,
		func(r, j int) (float64, bool, bool) { return math.NaN(), true, r == 3 && j == 2 }, nil)
	defer withNaN.Release()
	listMissing, err := FitEncoder(withNaN.Schema(), []string{"c"}, []arrow.Record{withNaN}, EncoderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if listMissing.Dim() != dim+1 || listMissing.Columns[dim].Kind != KindListMissing {
		t.Fatalf("fitted with a NaN: features %q", listMissing.FeatureNames())
	}
	if newEnsembleMust(t, rng, dim+1).Fold(listMissing) == nil {
		t.Fatal("Fold refused a list with its missing indicator")
	}
	otherList := &Encoder{Columns: slices.Clone(listMissing.Columns), Width: dim + 1}
	otherList.Columns[dim].Column = "d"

	mixed := &Encoder{Columns: slices.Clone(enc.Columns), Width: dim + 1}
	mixed.Columns = append(mixed.Columns, Feature{Name: "age", Kind: KindNumeric, Offset: dim, Width: 1, Std: 1})
	mixedEns, err := NewEnsemble(randomTeachers(rng, 4, 2, dim+1), 2)
	if err != nil {
		t.Fatal(err)
	}

	tiny := &Encoder{Columns: slices.Clone(enc.Columns), Width: dim}
	tiny.Columns[2].Std = 1e-40
	farMean := &Encoder{Columns: slices.Clone(enc.Columns), Width: dim}
	farMean.Columns[4].Mean, farMean.Columns[4].Std = -2049, 2

	trees, err := NewLearner("tree", LearnerOptions{MaxDepth: 2})
	if err != nil {
		t.Fatal(err)
	}
	x := intMatrix(rng, 30, dim)
	y := make([]int32, x.Rows)
	for i := range y {
		y[i] = int32(i % 2)
	}
	tree, err := trees.Fit(x, y, 2)
	if err != nil {
		t.Fatal(err)
	}
	treeEns, err := NewEnsemble([]Model{tree, randomTeachers(rng, 1, 2, dim)[0]}, 2)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		e    *Ensemble
		enc  *Encoder
	}{
		{"a teacher is not linear", treeEns, enc},
		{"an element's missing-indicator column", wide, missing},
		{"another list's missing indicator", newEnsembleMust(t, rng, dim+1), otherList},
		{"a feature besides the list", mixedEns, mixed},
		{"a standard deviation of 1e-40", stacked, tiny},
		{"a mean 1024.5 standard deviations from 0", stacked, farMean},
		{"no encoder", stacked, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.e.Fold(tc.enc) != nil {
				t.Error("Fold folded")
			}
		})
	}

	t.Run("float64 list", func(t *testing.T) {
		rec := oneColumn(mem, arrow.FixedSizeListOf(dim, arrow.PrimitiveTypes.Float64), func(b array.Builder) {
			lb := b.(array.ListLikeBuilder)
			lb.Append(true)
			for j := 0; j < dim; j++ {
				lb.ValueBuilder().(*array.Float64Builder).Append(float64(j))
			}
		})
		defer rec.Release()
		p, err := enc.Prepare(rec)
		if err != nil {
			t.Fatal(err)
		}
		if p.Raw([]*FoldedEnsemble{stacked.Fold(enc)}) != nil {
			t.Error("Raw took a float64 list")
		}
	})
}

// TestAllFinite: allFinite against math.IsNaN and math.IsInf, with one
// special value at each position of slices of every length up to 19 at
// each alignment, and the extreme finite values.
func TestAllFinite(t *testing.T) {
	buf := make([]float32, 24)
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7fc00001), math.Float32frombits(0xffffffff), math.Float32frombits(0x7f800001)}
	finites := []float32{0, float32(math.Copysign(0, -1)), math.MaxFloat32, -math.MaxFloat32,
		math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 1, -1.5e-38}
	naive := func(v []float32) bool {
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return false
			}
		}
		return true
	}
	for off := 0; off < 3; off++ {
		for n := 0; n < 20; n++ {
			v := buf[off : off+n]
			for i := range v {
				v[i] = finites[i%len(finites)]
			}
			if !allFinite(v) {
				t.Fatalf("offset %d, %d finite values: not all finite", off, n)
			}
			for i := range v {
				for _, s := range specials {
					old := v[i]
					v[i] = s
					if got, want := allFinite(v), naive(v); got != want {
						t.Fatalf("offset %d, length %d, %v at %d: allFinite %v, want %v", off, n, s, i, got, want)
					}
					v[i] = old
				}
			}
		}
	}
}

// BenchmarkFoldedVotes: one goroutine's votes of 250 teachers on a batch
// of 384-dim float32 embeddings, in tiles of 85 rows (voteTiles' 128 KiB),
// encoded column-major then voted on, or voted on in place by the folded
// teachers. Time it on a quiet machine only.
func BenchmarkFoldedVotes(b *testing.B) {
	const dim, rows, k, tile = 384, 8192, 250, 85
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(b, 0)
	rng := rand.New(rand.NewPCG(51, 1))
	rec := embeddingRows(mem, arrow.FixedSizeListOf(dim, arrow.PrimitiveTypes.Float32), rng, rows, dim, 0.01, 0.05, nil, nil)
	defer rec.Release()
	enc, err := FitEncoder(rec.Schema(), []string{"c"}, []arrow.Record{rec}, EncoderOptions{})
	if err != nil {
		b.Fatal(err)
	}
	e, err := NewEnsemble(randomTeachers(rng, k, 2, dim), 2)
	if err != nil {
		b.Fatal(err)
	}
	p, err := enc.Prepare(rec)
	if err != nil {
		b.Fatal(err)
	}
	raw := p.Raw([]*FoldedEnsemble{e.Fold(enc)})
	if raw == nil {
		b.Fatal("not foldable")
	}
	x := make([]float32, dim*tile)
	counts := make([]int32, 2*rows)
	for _, path := range []string{"encoded", "folded"} {
		b.Run(path, func(b *testing.B) {
			for b.Loop() {
				for lo := 0; lo < rows; lo += tile {
					hi := min(rows, lo+tile)
					if path == "folded" {
						raw.Votes(lo, hi, [][]int32{counts[2*lo : 2*hi]}, x)
						continue
					}
					p.EncodeColumns(lo, hi, x, tile)
					e.VotesColumns(x, tile, hi-lo, counts[2*lo:2*hi])
				}
			}
			b.ReportMetric(rows*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
