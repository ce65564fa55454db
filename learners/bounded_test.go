package learners

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/float16"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// Privacy invariant 8 at the learners' depth: whatever a value is, its
// encoding is bounded by the public range; a row DPLogReg cannot bound is
// dropped, never rounded; the rounding refuses what it cannot convert and
// its norm check cannot wrap.

// hostileFloats are values that once reached a model unbounded.
var hostileFloats = []float64{1e39, -1e39, 1e300, -1e300, math.MaxFloat64, -math.MaxFloat64, math.Inf(1), math.Inf(-1),
	math.NaN(), math.Copysign(0, -1), 5e-324, math.MaxFloat32, -math.MaxFloat32, 0x1p53 + 1}

// boundedColumn builds a one-column batch of type typ from vals (a value
// the type cannot hold is saturated), with one null after them if null.
func boundedColumn(mem memory.Allocator, typ arrow.DataType, vals []float64, null bool) arrow.Record {
	schema := arrow.NewSchema([]arrow.Field{{Name: "c", Type: typ, Nullable: true}}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	sat := func(v float64, lo, hi float64) float64 {
		if v != v {
			return 0
		}
		return math.Max(lo, math.Min(hi, v))
	}
	for _, v := range vals {
		switch fb := b.Field(0).(type) {
		case *array.Float64Builder:
			fb.Append(v)
		case *array.Float32Builder:
			fb.Append(float32(v))
		case *array.Float16Builder:
			fb.Append(float16.New(float32(v)))
		case *array.Int64Builder:
			fb.Append(int64(sat(v, math.MinInt64, 0x1p63-1024)))
		case *array.Uint64Builder:
			fb.Append(uint64(sat(v, 0, 0x1p64-2048)))
		case *array.TimestampBuilder:
			fb.Append(arrow.Timestamp(sat(v, math.MinInt64, 0x1p63-1024)))
		case *array.FixedSizeListBuilder:
			fb.Append(true)
			for k := 0; k < 3; k++ {
				x := 0.5 * float64(k)
				if k == 1 {
					x = v
				}
				switch vb := fb.ValueBuilder().(type) {
				case *array.Float32Builder:
					vb.Append(float32(x))
				case *array.Float64Builder:
					vb.Append(x)
				case *array.Int32Builder:
					vb.Append(int32(sat(x, math.MinInt32, math.MaxInt32)))
				}
			}
		}
	}
	if null {
		b.Field(0).AppendNull()
	}
	return b.NewRecord()
}

// TestEncodingIsBoundedByThePublicRange: for every numeric path of the
// encoder (typed loops, the value-by-value path, list elements one at a
// time, in runs and element by element), a hostile value encodes as a
// finite float32 no further from 0 than the public range's ends do.
func TestEncodingIsBoundedByThePublicRange(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(4, 4))
	public := make([]float64, 50)
	for i := range public {
		public[i] = 10 + 3*rng.NormFloat64()
	}
	for _, typ := range []arrow.DataType{
		arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float32, arrow.FixedWidthTypes.Float16,
		arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint64, &arrow.TimestampType{Unit: arrow.Nanosecond},
		arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32), arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float64),
		arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Int32),
	} {
		t.Run(typ.String(), func(t *testing.T) {
			fit := boundedColumn(mem, typ, public, false)
			defer fit.Release()
			enc, err := FitEncoder(fit.Schema(), []string{"c"}, []arrow.Record{fit}, EncoderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// The bound: the encodings of the public sample's own ends.
			var pubX Matrix
			if err := enc.Encode(fit, &pubX); err != nil {
				t.Fatal(err)
			}
			lim := make([]float64, enc.Dim())
			for i := 0; i < pubX.Rows; i++ {
				for j, v := range pubX.Row(i) {
					lim[j] = math.Max(lim[j], math.Abs(float64(v)))
				}
			}
			// Without a null, a list's elements are encoded in runs;
			// with one, element by element.
			for _, null := range []bool{false, true} {
				rec := boundedColumn(mem, typ, hostileFloats, null)
				defer rec.Release()
				checkBounded(t, enc, rec, lim)
			}
		})
	}
}

// checkBounded encodes rec in every way a batch is encoded and checks that
// column j is within ±lim[j] (and the ways agree).
func checkBounded(t *testing.T, enc *Encoder, rec arrow.Record, lim []float64) {
	t.Helper()
	{
		{
			p, err := enc.Prepare(rec)
			if err != nil {
				t.Fatal(err)
			}
			var rows Matrix
			p.EncodeRows(0, p.Rows(), &rows)
			cols := make([]float32, enc.Dim()*p.Rows())
			p.EncodeColumns(0, p.Rows(), cols, p.Rows())
			one := NewMatrix(0, enc.Dim())
			for i := 0; i < rows.Rows; i++ {
				p.EncodeRows(i, i+1, one) // one row at a time, as a teacher's rows
				for j, v := range rows.Row(i) {
					if !(math.Abs(float64(v)) <= lim[j]*(1+1e-6)) {
						t.Errorf("row %d (%v), column %d: encoded %v, the public range encodes within ±%v", i, hostileFloats[min(i, len(hostileFloats)-1)], j, v, lim[j])
					}
					if c := cols[j*p.Rows()+i]; c != v && !(c != c && v != v) {
						t.Errorf("row %d, column %d: %v column-major, %v row-major", i, j, c, v)
					}
					if o := one.Data[j]; o != v {
						t.Errorf("row %d, column %d: %v alone, %v in the batch", i, j, o, v)
					}
				}
			}
		}
	}
}

// TestBoundOverflowedStatistics: a public column of values near ±MaxFloat64
// overflows the mean and the variance; the encoder still encodes every
// value as a finite float32 within ±maxScaled, also when restored from JSON
// with statistics that are not finite.
func TestBoundOverflowedStatistics(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	fit := boundedColumn(mem, arrow.PrimitiveTypes.Float64, []float64{math.MaxFloat64, -math.MaxFloat64, 1e308, -1e308, 0}, true)
	defer fit.Release()
	enc, err := FitEncoder(fit.Schema(), []string{"c"}, []arrow.Record{fit}, EncoderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stored := []*Encoder{enc, {Columns: []Feature{{Name: "c", Kind: KindNumeric, Width: 1, Mean: math.NaN(), Std: math.Inf(1), Min: math.Inf(-1), Max: math.NaN()}}, Width: 1}}
	for k, e := range stored {
		if k > 0 {
			e.init()
			f := &e.Columns[0]
			f.bound()
		}
		rec := boundedColumn(mem, arrow.PrimitiveTypes.Float64, hostileFloats, true)
		var x Matrix
		if err := e.Encode(rec, &x); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		for i, v := range x.Data {
			if !(math.Abs(float64(v)) <= maxScaled) {
				t.Errorf("encoder %d, value %d: encoded %v, want finite within ±%g", k, i, v, maxScaled)
			}
		}
	}
}

// TestDPLogRegDropsWhatItCannotBound: rows of a caller's matrix holding
// ±Inf or NaN are dropped and counted, and the released sums are exactly
// those of the same fit without them (they draw no rounding bits).
func TestDPLogRegDropsWhatItCannotBound(t *testing.T) {
	const n, d, k = 120, 4, 3
	rng := rand.New(rand.NewPCG(8, 8))
	x := NewMatrix(n, d)
	y := make([]int32, n)
	for i := range y {
		y[i] = int32(rng.IntN(k))
		for j := 0; j < d; j++ {
			x.Row(i)[j] = float32(rng.NormFloat64())
		}
	}
	bad := NewMatrix(n+3, d)
	copy(bad.Data, x.Data)
	yb := append(slices.Clone(y), 0, 1, 2)
	bad.Row(n)[0] = float32(math.Inf(1))
	bad.Row(n + 1)[2] = float32(math.NaN())
	bad.Row(n + 2)[1], bad.Row(n + 2)[3] = float32(math.Inf(-1)), float32(math.Inf(1))
	p, err := PlanDPLogReg(d, k, n, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	p.Steps = 10
	sums := func(x *Matrix, y []int32) ([][]int64, int) {
		var out [][]int64
		l := &DPLogReg{Params: p, Rand: newBits(1), Noise: IntNoiseFunc(func(v []int64) error {
			out = append(out, slices.Clone(v))
			return nil
		})}
		if _, err := l.Fit(x, y, k); err != nil {
			t.Fatal(err)
		}
		return out, l.Dropped
	}
	want, dropped := sums(x, y)
	if dropped != 0 {
		t.Fatalf("ordinary rows: %d dropped", dropped)
	}
	got, dropped := sums(bad, yb)
	if dropped != 3 {
		t.Errorf("%d rows dropped, want the 3 that are not finite", dropped)
	}
	for s := range want {
		if !slices.Equal(got[s], want[s]) {
			t.Fatalf("step %d: the released sum moved with rows that should have been dropped", s+1)
		}
	}
}

// TestRoundingRefusesAndCannotWrap: the rounding adds nothing for a
// coordinate that is not finite or beyond the bound, and a vector whose
// squared norm exceeds 2⁶⁴ (it wrapped to a small int64 before) is not
// added either.
func TestRoundingRefusesAndCannotWrap(t *testing.T) {
	const sensSq = 1 << 62
	ind := []int32{0, 1, 2, 3, 4, 5, 6}
	ones := []float64{1, 1, 1, 1, 1, 1, 1}
	for _, c := range []struct {
		name string
		z    []float64
		f    float64
		val  []float64
	}{
		{"NaN factor", []float64{0.5}, math.NaN(), ones},
		{"+Inf value", []float64{0.5}, 1, []float64{1, math.Inf(1), 1, 1, 1, 1, 1}},
		{"-Inf residual", []float64{math.Inf(-1)}, 1, ones},
		{"beyond 2^63", []float64{1}, 1e19, ones},
		{"squares that wrap", []float64{1}, 0x1p31, ones}, // 8 coordinates of 2³¹: 2⁶⁵
	} {
		t.Run(c.name, func(t *testing.T) {
			rd := newRounder(newBits(2), sensSq)
			sum := make([]int64, len(c.z)*(len(ind)+1))
			ok := rd.add(sum, c.z, c.f, len(ind), ind, c.val)
			n2 := new(big.Int)
			for _, v := range sum {
				b := big.NewInt(v)
				n2.Add(n2, b.Mul(b, b))
			}
			if ok || n2.Sign() != 0 {
				t.Errorf("added %v (squared norm %s, bound %d), want nothing added", ok, n2, int64(sensSq))
			}
		})
	}
	// Within the bound, a vector is added as before.
	rd := newRounder(newBits(2), sensSq)
	sum := make([]int64, 8)
	if !rd.add(sum, []float64{1}, 0x1p29, len(ind), ind, ones) || sum[0] != 1<<29 {
		t.Errorf("a vector within the bound: %v", sum)
	}
	if got := fmt.Sprint(rd.round(math.NaN()), rd.round(math.Inf(1)), rd.round(-1e300)); got != "0 0 0" {
		t.Errorf("round of NaN, +Inf, −1e300: %s, want 0 0 0", got)
	}
}
