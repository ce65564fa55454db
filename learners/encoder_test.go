package learners

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

var testFeatures = []string{"f", "i", "s", "ls", "d", "b", "u"}

// testRecord builds a 6-row record with every supported column kind, plus an
// unsupported list-of-strings column "l".
func testRecord(t *testing.T, mem memory.Allocator) arrow.Record {
	t.Helper()
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "i", Type: arrow.PrimitiveTypes.Int32},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ls", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "d", Type: dictType, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.BinaryTypes.String)},
		{Name: "u", Type: arrow.PrimitiveTypes.Uint8},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	valid := []bool{true, true, false, true, true, true}
	b.Field(0).(*array.Float64Builder).AppendValues([]float64{1, 2, 0, math.NaN(), math.Inf(1), math.Inf(-1)}, valid)
	b.Field(1).(*array.Int32Builder).AppendValues([]int32{5, 5, 5, 5, 5, 5}, nil)
	b.Field(2).(*array.StringBuilder).AppendValues([]string{"a", "b", "b", "c", "", "a"}, []bool{true, true, true, true, false, true})
	b.Field(3).(*array.LargeStringBuilder).AppendValues([]string{"x", "x", "y", "", "z", "z"}, []bool{true, true, true, false, true, true})
	db := b.Field(4).(*array.BinaryDictionaryBuilder)
	for _, v := range []string{"p", "q", "q", "", "p", "q"} {
		if v == "" {
			db.AppendNull()
		} else if err := db.AppendString(v); err != nil {
			t.Fatal(err)
		}
	}
	b.Field(5).(*array.BooleanBuilder).AppendValues([]bool{true, false, false, true, true, false}, []bool{true, true, false, true, true, true})
	lb := b.Field(6).(*array.ListBuilder)
	for range 6 {
		lb.Append(true)
		lb.ValueBuilder().(*array.StringBuilder).Append("1")
	}
	b.Field(7).(*array.Uint8Builder).AppendValues([]uint8{0, 1, 2, 3, 4, 5}, nil)
	return b.NewRecord()
}

// wantRows is the encoding of testRecord with TopK 2:
// f, f=<missing>, i, s=a, s=b, s=<other>, s=<missing>, ls=x, ls=z, ls=<other>,
// ls=<missing>, d=q, d=p, d=<other>, d=<missing>, b, b=<missing>, u.
func wantRows() [][]float32 {
	su := float32(math.Sqrt(17.5 / 6))
	u := func(v float32) float32 { return (v - 2.5) / su }
	return [][]float32{
		{-1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, u(0)},
		{1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, u(1)},
		{0, 1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, u(2)},
		{0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, u(3)},
		{1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 1, 0, u(4)},
		{-1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, u(5)},
	}
}

func checkRows(t *testing.T, x *Matrix, want [][]float32) {
	t.Helper()
	if x.Rows != len(want) {
		t.Fatalf("%d rows, want %d", x.Rows, len(want))
	}
	for i, w := range want {
		got := x.Row(i)
		for j := range w {
			if math.Abs(float64(got[j]-w[j])) > 1e-6 {
				t.Fatalf("row %d:\n got %v\nwant %v", i, got, w)
			}
		}
	}
}

func TestEncoder(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rec := testRecord(t, mem)
	defer rec.Release()

	enc, err := FitEncoder(rec.Schema(), testFeatures, []arrow.Record{rec}, EncoderOptions{TopK: 2})
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{"f", "f=<missing>", "i", "s=a", "s=b", "s=<other>", "s=<missing>",
		"ls=x", "ls=z", "ls=<other>", "ls=<missing>", "d=q", "d=p", "d=<other>", "d=<missing>",
		"b", "b=<missing>", "u"}
	if got := enc.FeatureNames(); !reflect.DeepEqual(got, wantNames) {
		t.Fatalf("FeatureNames() = %v\nwant %v", got, wantNames)
	}
	if enc.Dim() != len(wantNames) {
		t.Fatalf("Dim() = %d, want %d", enc.Dim(), len(wantNames))
	}
	if got := enc.Features(); !reflect.DeepEqual(got, testFeatures) {
		t.Fatalf("Features() = %v", got)
	}

	// Columns in another order plus unrelated ones, and slices with offsets.
	perm := array.NewRecord(
		arrow.NewSchema([]arrow.Field{rec.Schema().Field(7), rec.Schema().Field(6), rec.Schema().Field(5), rec.Schema().Field(4),
			rec.Schema().Field(3), rec.Schema().Field(2), rec.Schema().Field(1), rec.Schema().Field(0)}, nil),
		[]arrow.Array{rec.Column(7), rec.Column(6), rec.Column(5), rec.Column(4), rec.Column(3), rec.Column(2), rec.Column(1), rec.Column(0)}, rec.NumRows())
	defer perm.Release()
	sl := rec.NewSlice(2, 5)
	defer sl.Release()

	tests := []struct {
		name string
		rec  arrow.Record
		want [][]float32
	}{
		{"same order", rec, wantRows()},
		{"permuted columns", perm, wantRows()},
		{"slice 2..5", sl, wantRows()[2:5]},
	}
	x := NewMatrix(0, enc.Dim())
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for i := range x.Data {
				x.Data[i] = 42 // stale contents must be overwritten
			}
			if err := enc.Encode(tc.rec, x); err != nil {
				t.Fatal(err)
			}
			checkRows(t, x, tc.want)

			// The same rows by parts: row-major and column-major tiles.
			p, err := enc.Prepare(tc.rec)
			if err != nil {
				t.Fatal(err)
			}
			n := p.Rows()
			for _, part := range [][2]int{{0, n}, {1, n}, {0, 1}, {n - 1, n}, {1, n - 1}} {
				lo, hi := part[0], part[1]
				if lo >= hi {
					continue
				}
				m := hi - lo
				var rm Matrix
				rm.Data = []float32{42, 42, 42}
				p.EncodeRows(lo, hi, &rm)
				checkRows(t, &rm, tc.want[lo:hi])
				ld := m + 3
				cm := make([]float32, (enc.Dim()-1)*ld+m)
				for i := range cm {
					cm[i] = 42
				}
				p.EncodeColumns(lo, hi, cm, ld)
				for r := 0; r < m; r++ {
					for j, w := range tc.want[lo+r] {
						if got := cm[j*ld+r]; math.Abs(float64(got-w)) > 1e-6 {
							t.Fatalf("rows %d–%d column-major: row %d column %d = %v, want %v", lo, hi, r, j, got, w)
						}
					}
				}
				for j := 0; j+1 < enc.Dim(); j++ {
					for g := m; g < ld; g++ {
						if cm[j*ld+g] != 42 {
							t.Fatalf("rows %d–%d column-major: gap cell %d of column %d overwritten", lo, hi, g, j)
						}
					}
				}
			}
		})
	}

	t.Run("json round trip", func(t *testing.T) {
		b, err := json.Marshal(enc)
		if err != nil {
			t.Fatal(err)
		}
		var back Encoder
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		y := NewMatrix(0, back.Dim())
		if err := back.Encode(rec, y); err != nil {
			t.Fatal(err)
		}
		checkRows(t, y, wantRows())
	})

	t.Run("sample limit", func(t *testing.T) {
		e2, err := FitEncoder(rec.Schema(), []string{"u"}, []arrow.Record{rec}, EncoderOptions{MaxSampleRows: 2})
		if err != nil {
			t.Fatal(err)
		}
		if c := e2.Columns[0]; c.Mean != 0.5 || c.Std != 0.5 {
			t.Fatalf("mean %v std %v over the first 2 rows, want 0.5 and 0.5", c.Mean, c.Std)
		}
	})
}

func TestEncoderErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rec := testRecord(t, mem)
	defer rec.Release()

	fitTests := []struct {
		name     string
		features []string
		want     []string
	}{
		{"unsupported list", []string{"f", "l"}, []string{`"l"`, "list"}},
		{"missing column", []string{"nope"}, []string{`"nope"`}},
		{"no features", nil, []string{"no feature"}},
		{"duplicate", []string{"f", "f"}, []string{"twice"}},
	}
	for _, tc := range fitTests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FitEncoder(rec.Schema(), tc.features, []arrow.Record{rec}, EncoderOptions{})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %s", err, w)
				}
			}
		})
	}

	enc, err := FitEncoder(rec.Schema(), []string{"f", "s", "b", "d"}, []arrow.Record{rec}, EncoderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	field := func(name string, typ arrow.DataType) arrow.Field {
		return arrow.Field{Name: name, Type: typ, Nullable: true}
	}
	base := []arrow.Field{
		field("f", arrow.PrimitiveTypes.Float64), field("s", arrow.BinaryTypes.String),
		field("b", arrow.FixedWidthTypes.Boolean), field("d", arrow.BinaryTypes.String),
	}
	with := func(i int, f arrow.Field) *arrow.Schema {
		fs := append([]arrow.Field(nil), base...)
		fs[i] = f
		return arrow.NewSchema(fs, nil)
	}
	schemaTests := []struct {
		name   string
		schema *arrow.Schema
		want   []string // empty: compatible
	}{
		{"identical", arrow.NewSchema(base, nil), nil},
		{"int for float", with(0, field("f", arrow.PrimitiveTypes.Int16)), nil},
		{"large string for dictionary", with(3, field("d", arrow.BinaryTypes.LargeString)), nil},
		{"string for float", with(0, field("f", arrow.BinaryTypes.String)), []string{`"f"`, "utf8", "float64"}},
		{"float for string", with(1, field("s", arrow.PrimitiveTypes.Float32)), []string{`"s"`, "float32", "utf8"}},
		{"int for bool", with(2, field("b", arrow.PrimitiveTypes.Int8)), []string{`"b"`, "int8", "bool"}},
		{"missing", arrow.NewSchema(base[:3], nil), []string{`"d"`, "missing"}},
	}
	for _, tc := range schemaTests {
		t.Run("CheckSchema/"+tc.name, func(t *testing.T) {
			err := enc.CheckSchema(tc.schema)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrSchemaMismatch) {
				t.Fatalf("err = %v, want ErrSchemaMismatch", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %s", err, w)
				}
			}
		})
	}

	t.Run("Encode/mismatch", func(t *testing.T) {
		bad := array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "f", Type: rec.Column(2).DataType()}}, nil), []arrow.Array{rec.Column(2)}, rec.NumRows())
		defer bad.Release()
		e1, err := FitEncoder(rec.Schema(), []string{"f"}, []arrow.Record{rec}, EncoderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := e1.Encode(bad, NewMatrix(0, e1.Dim())); !errors.Is(err, ErrSchemaMismatch) {
			t.Fatalf("err = %v, want ErrSchemaMismatch", err)
		}
	})
}

func TestEncodeAllocs(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rec := testRecord(t, mem)
	defer rec.Release()
	enc, err := FitEncoder(rec.Schema(), []string{"f", "i", "s", "ls", "b", "u"}, []arrow.Record{rec}, EncoderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	x := NewMatrix(6, enc.Dim())
	allocs := testing.AllocsPerRun(100, func() {
		if err := enc.Encode(rec, x); err != nil {
			t.Fatal(err)
		}
	})
	// Only the per-batch column look-ups allocate (FieldIndices), never per row.
	if allocs > float64(2*len(enc.Columns)) {
		t.Errorf("Encode allocates %v times per batch", allocs)
	}
}

// TestFitStatsBatchMatchesValueByValue: the batch path of the numeric
// statistics gives the figures of the value-by-value (Welford) path.
func TestFitStatsBatchMatchesValueByValue(t *testing.T) {
	batches := [][]float64{
		{1, 2, 3, math.NaN(), 4},
		{math.Inf(1), -7.5, 1e6, 0.25},
		{},
		{42},
		{math.NaN(), math.Inf(-1)},
	}
	fresh := func() fitStats { return fitStats{min: math.Inf(1), max: math.Inf(-1)} }
	a, b := fresh(), fresh()
	for _, vs := range batches {
		a.addFloats(vs)
		for _, v := range vs {
			b.addNum(v, true)
		}
	}
	if a.n != b.n || a.missing != b.missing || a.min != b.min || a.max != b.max {
		t.Fatalf("batch %+v, value by value %+v", a, b)
	}
	if math.Abs(a.mean-b.mean) > 1e-9*math.Abs(b.mean) || math.Abs(a.m2-b.m2) > 1e-9*b.m2 {
		t.Fatalf("mean %v / %v, m2 %v / %v", a.mean, b.mean, a.m2, b.m2)
	}
}

// denseRecord builds rows × cols of N(0,1) float64 columns f0, f1, ...
func denseRecord(rows, cols int, seed uint64) (arrow.Record, []string) {
	mem := memory.NewGoAllocator()
	fields := make([]arrow.Field, cols)
	names := make([]string, cols)
	arrs := make([]arrow.Array, cols)
	r := rand.New(rand.NewPCG(seed, seed+1))
	for j := range cols {
		names[j] = fmt.Sprintf("f%d", j)
		fields[j] = arrow.Field{Name: names[j], Type: arrow.PrimitiveTypes.Float64, Nullable: true}
		bld := array.NewFloat64Builder(mem)
		for range rows {
			bld.Append(r.NormFloat64())
		}
		arrs[j] = bld.NewArray()
		bld.Release()
	}
	rec := array.NewRecord(arrow.NewSchema(fields, nil), arrs, int64(rows))
	for _, a := range arrs {
		a.Release()
	}
	return rec, names
}

// BenchmarkEncodeDense encodes batches of 16,384 rows × 64 float64 columns
// (the public batches of the speed workload).
func BenchmarkEncodeDense(b *testing.B) {
	const rows = 16384
	rec, names := denseRecord(rows, 64, 5)
	defer rec.Release()
	enc, err := FitEncoder(rec.Schema(), names, []arrow.Record{rec}, EncoderOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var dst Matrix
	for b.Loop() {
		if err := enc.Encode(rec, &dst); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(rows*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkFitEncoderDense fits the encoder on 100,000 rows × 64 float64
// columns (the public head of the speed workload).
func BenchmarkFitEncoderDense(b *testing.B) {
	const rows = 100_000
	rec, names := denseRecord(rows, 64, 7)
	defer rec.Release()
	for b.Loop() {
		if _, err := FitEncoder(rec.Schema(), names, []arrow.Record{rec}, EncoderOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(rows*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// TestPreparedConcurrent encodes parts of one prepared batch from several
// goroutines (as the stream's voters do), on a slice whose numeric column
// has nulls: Arrow computes such a slice's null count lazily, so this test,
// under -race, checks that Prepare leaves nothing to compute.
func TestPreparedConcurrent(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rec := testRecord(t, mem)
	defer rec.Release()
	enc, err := FitEncoder(rec.Schema(), testFeatures, []arrow.Record{rec}, EncoderOptions{TopK: 2})
	if err != nil {
		t.Fatal(err)
	}
	sl := rec.NewSlice(1, 6) // f has a null at row 2
	defer sl.Release()
	p, err := enc.Prepare(sl)
	if err != nil {
		t.Fatal(err)
	}
	want := wantRows()[1:6]
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo := g % 3
			ld := 5
			x := make([]float32, enc.Dim()*ld)
			p.EncodeColumns(lo, 5, x, ld)
			for r := lo; r < 5; r++ {
				for j, w := range want[r] {
					if got := x[j*ld+r-lo]; math.Abs(float64(got-w)) > 1e-6 {
						errs <- fmt.Errorf("goroutine %d: row %d column %d = %v, want %v", g, r, j, got, w)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestAddNumBoundsAreMathMinMax: addNum's bounds are, bit for bit, those of
// math.Min and math.Max over the finite values, signed zeros included, and
// its mean and m2 those of Welford's update, over sequences of ordinary
// values, ±0, ±Inf, NaN and invalid entries.
func TestAddNumBoundsAreMathMinMax(t *testing.T) {
	negZero := math.Copysign(0, -1)
	seqs := [][]float64{
		{0, negZero},
		{negZero, 0},
		{0, 0, negZero, 0},
		{negZero},
		{math.Inf(1), negZero, math.NaN(), 0},
		{1, -1, negZero, 0, 2.5, -3e300, 3e300, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64},
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 20 {
		s := make([]float64, 50)
		for i := range s {
			s[i] = []float64{0, negZero, r.NormFloat64(), math.Inf(1), math.Inf(-1), math.NaN(), float64(r.IntN(3) - 1)}[r.IntN(7)]
		}
		seqs = append(seqs, s)
	}
	for i, vs := range seqs {
		got := fitStats{min: math.Inf(1), max: math.Inf(-1)}
		want := got
		for j, v := range vs {
			valid := j%11 != 10
			got.addNum(v, valid)
			switch {
			case !valid || math.IsNaN(v):
				want.missing++
			case math.IsInf(v, 0):
			default:
				want.n++
				d := v - want.mean
				want.mean += d / float64(want.n)
				want.m2 += d * (v - want.mean)
				want.min = math.Min(want.min, v)
				want.max = math.Max(want.max, v)
			}
		}
		bits := func(s fitStats) [4]uint64 {
			return [4]uint64{math.Float64bits(s.min), math.Float64bits(s.max), math.Float64bits(s.mean), math.Float64bits(s.m2)}
		}
		if bits(got) != bits(want) || got.n != want.n || got.missing != want.missing {
			t.Errorf("sequence %d: got %+v, want %+v", i, got, want)
		}
	}
}

// embeddingRecord returns rows of one fixed_size_list<float32>[dim] column
// emb of standard normal values (a fixed seed).
func embeddingRecord(rows, dim int) arrow.Record {
	lb := array.NewFixedSizeListBuilder(memory.NewGoAllocator(), int32(dim), arrow.PrimitiveTypes.Float32)
	defer lb.Release()
	vb := lb.ValueBuilder().(*array.Float32Builder)
	r := rand.New(rand.NewPCG(3, 4))
	for range rows {
		lb.Append(true)
		for range dim {
			vb.Append(float32(r.NormFloat64()))
		}
	}
	col := lb.NewArray()
	defer col.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "emb", Type: col.DataType(), Nullable: true}}, nil)
	return array.NewRecord(sc, []arrow.Array{col}, int64(rows))
}

// BenchmarkFitEncoderEmbedding fits the encoder on 100,000 rows of one
// fixed_size_list<float32>[384] column (the public head of the embedding
// speed workload).
func BenchmarkFitEncoderEmbedding(b *testing.B) {
	const rows, dim = 100_000, 384
	rec := embeddingRecord(rows, dim)
	defer rec.Release()
	sc := rec.Schema()
	for b.Loop() {
		if _, err := FitEncoder(sc, []string{"emb"}, []arrow.Record{rec}, EncoderOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(rows*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkEncodeEmbeddingRows encodes 100,000 rows of one
// fixed_size_list<float32>[384] column, 400 rows at a time (a teacher's
// rows of the sensitive data in the embedding speed workload).
func BenchmarkEncodeEmbeddingRows(b *testing.B) {
	const rows, dim = 100_000, 384
	rec := embeddingRecord(rows, dim)
	defer rec.Release()
	sc := rec.Schema()
	enc, err := FitEncoder(sc, []string{"emb"}, []arrow.Record{rec}, EncoderOptions{})
	if err != nil {
		b.Fatal(err)
	}
	p, err := enc.Prepare(rec)
	if err != nil {
		b.Fatal(err)
	}
	var m Matrix
	b.SetBytes(rows * dim * 4)
	for b.Loop() {
		for lo := 0; lo < rows; lo += 400 {
			p.EncodeRows(lo, lo+400, &m)
		}
	}
}
