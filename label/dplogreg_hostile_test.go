package label

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/learners"
)

// hostileSchema is a CSV's x1, x2, y (y absent from the public file).
func hostileSchema(withLabel bool) *arrow.Schema {
	fields := []arrow.Field{
		{Name: "x1", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "x2", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}
	if withLabel {
		fields = append(fields, arrow.Field{Name: "y", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	}
	return arrow.NewSchema(fields, nil)
}

// hostileRows builds n Gaussian rows (y = 1 when x1 + x2 > 0), then the
// extra rows.
func hostileRows(mem memory.Allocator, n int, seed uint64, withLabel bool, extra ...[3]float64) arrow.Record {
	rng := rand.New(rand.NewPCG(seed, 3))
	b := array.NewRecordBuilder(mem, hostileSchema(withLabel))
	defer b.Release()
	add := func(x1, x2 float64, y int64) {
		b.Field(0).(*array.Float64Builder).Append(x1)
		b.Field(1).(*array.Float64Builder).Append(x2)
		if withLabel {
			b.Field(2).(*array.Int64Builder).Append(y)
		}
	}
	for i := 0; i < n; i++ {
		x1, x2 := rng.NormFloat64(), rng.NormFloat64()
		y := int64(0)
		if x1+x2+0.3*rng.NormFloat64() > 0 {
			y = 1
		}
		add(x1, x2, y)
	}
	for _, r := range extra {
		add(r[0], r[1], int64(r[2]))
	}
	return b.NewRecord()
}

// TestDPLogRegHostileRowChangesLittle: a seeded dp-logreg run on 301
// ordinary rows and the same run with the last one replaced by a row holding a huge value
// (1e39, which overflowed to +Inf in float32, became NaN in the row
// normalisation, skipped the clip and was rounded to −2⁶³ on every
// coordinate, so that the weights reached 1e16 and the labels one class)
// give nearly the same model: the weights move by no more than the steps'
// bound on what one row and the shifted rounding draws of the others can
// move them, and the labels of the public rows agree.
func TestDPLogRegHostileRowChangesLittle(t *testing.T) {
	for _, extra := range [][3]float64{
		{1e39, 0.5, 1}, {-1e300, 0.5, 0}, {math.MaxFloat64, -math.MaxFloat64, 1}, {math.NaN(), math.Inf(1), 0},
	} {
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		type result struct {
			w      []float32
			labels []int64
			rep    *Report
		}
		run := func(sens arrow.Record) result {
			t.Helper()
			pub := hostileRows(mem, 200, 2, false)
			seed := uint64(11)
			cfg := Config{Label: "y", Classes: []string{"0", "1"}, Mechanism: MechanismDPLogReg, Epsilon: 1, Delta: 1e-5,
				Seed: &seed, Allocator: mem, BatchSize: 1024, Teachers: 10, Learner: "logreg"}
			l, err := New(cfg, hostileSchema(true), hostileSchema(false))
			if err != nil {
				t.Fatal(err)
			}
			out := &collect{}
			rep, err := l.Run(context.Background(), &memReader{schema: sens.Schema(), recs: []arrow.Record{sens}},
				&memReader{schema: pub.Schema(), recs: []arrow.Record{pub}}, out)
			if err != nil {
				t.Fatalf("added row %v: %v", extra, err)
			}
			pub.Release()
			kind, b, err := learners.EncodeModel(l.Trained().Model)
			if err != nil || kind != learners.ModelLinearRowNorm {
				t.Fatalf("model %q: %v", kind, err)
			}
			// norm (f64), classes and dim (u32), then the weights (f32).
			k, d := binary.LittleEndian.Uint32(b[8:]), binary.LittleEndian.Uint32(b[12:])
			w := make([]float32, k*d)
			for j := range w {
				w[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[16+4*j:]))
			}
			return result{w: w, labels: out.labels, rep: rep}
		}
		// The hostile row replaces an ordinary one, so that the noisy
		// count, hence the plan and the noise draws, are the same.
		d := hostileRows(mem, 300, 1, true, [3]float64{0.2, -0.1, 1})
		d1 := hostileRows(mem, 300, 1, true, extra)
		a, b := run(d), run(d1)
		d.Release()
		d1.Release()

		p := a.rep.DPLogReg
		if p == nil || b.rep.DPLogReg == nil || b.rep.DPLogReg.Steps != p.Steps {
			t.Fatalf("added row %v: the reports' dp_logreg sections differ: %+v, %+v", extra, p, b.rep.DPLogReg)
		}
		// Per step the released sums differ by the two rows' rounded
		// gradients (ℓ2 ≤ 2√SensSq) and by the other rows' rounding draws,
		// shifted (at most 1 per row and coordinate); the step turns a sum
		// into lr/(Γ·rows) of the parameters, rows the noisy count (at
		// least 300 − 6σc here, with σc ≈ 24).
		dims := float64(p.Dims)
		perStep := float64(p.LearnRate) * (2*math.Sqrt(float64(p.SensSq)) + math.Sqrt(dims)*301) / (float64(p.Scale) * 150)
		bound := float64(p.Steps) * perStep
		var dist, maxW float64
		for j := range a.w {
			dist += (float64(a.w[j]) - float64(b.w[j])) * (float64(a.w[j]) - float64(b.w[j]))
			maxW = math.Max(maxW, math.Abs(float64(b.w[j])))
		}
		dist = math.Sqrt(dist)
		if !(dist <= bound) {
			t.Errorf("added row %v: the weights moved by %.3g (largest %.3g), more than the %.3g that one row and the rounding can move them",
				extra, dist, maxW, bound)
		}
		t.Logf("added row %v: weights moved by %.3g (bound %.3g, largest %.3g)", extra, dist, bound, maxW)
		agree := 0
		for i := range a.labels {
			if a.labels[i] == b.labels[i] {
				agree++
			}
		}
		if len(a.labels) != 200 || agree < 190 {
			t.Errorf("added row %v: %d of %d labels agree with the run without it", extra, agree, len(a.labels))
		}
		mem.AssertSize(t, 0)
	}
}
