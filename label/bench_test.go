package label

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/learners"
)

// memReader serves record batches held in memory.
type memReader struct {
	schema *arrow.Schema
	recs   []arrow.Record
	next   int
}

func (r *memReader) Schema() *arrow.Schema { return r.schema }

func (r *memReader) Read() (arrow.Record, error) {
	if r.next >= len(r.recs) {
		return nil, io.EOF
	}
	rec := r.recs[r.next]
	r.next++
	rec.Retain()
	return rec, nil
}

// discard counts what it is given.
type discard struct{ rows int64 }

func (d *discard) Write(rec arrow.Record) error {
	d.rows += rec.NumRows()
	return nil
}

// synthetic makes the peer's data (shared/peers/sklearn_pate.py): features ~
// N(0, 1), label = argmax of x·W + N(0, 0.5²) noise, W ~ N(0, 1/d).
func synthetic(mem memory.Allocator, n, d, k, batch int, withLabel bool, rng *rand.Rand, w []float64) *memReader {
	fields := make([]arrow.Field, 0, d+1)
	for j := 0; j < d; j++ {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("x%d", j), Type: arrow.PrimitiveTypes.Float64})
	}
	if withLabel {
		fields = append(fields, arrow.Field{Name: "label", Type: arrow.PrimitiveTypes.Int64})
	}
	schema := arrow.NewSchema(fields, nil)
	r := &memReader{schema: schema}
	x := make([]float64, d)
	for start := 0; start < n; start += batch {
		m := min(batch, n-start)
		b := array.NewRecordBuilder(mem, schema)
		for i := 0; i < m; i++ {
			for j := range x {
				x[j] = rng.NormFloat64()
				b.Field(j).(*array.Float64Builder).Append(x[j])
			}
			if withLabel {
				best, bestV := 0, math.Inf(-1)
				for c := 0; c < k; c++ {
					v := 0.5 * rng.NormFloat64()
					for j := range x {
						v += x[j] * w[j*k+c]
					}
					if v > bestV {
						best, bestV = c, v
					}
				}
				b.Field(d).(*array.Int64Builder).Append(int64(best))
			}
		}
		r.recs = append(r.recs, b.NewRecord())
		b.Release()
	}
	return r
}

func syntheticPair(mem memory.Allocator, nPriv, nPub, d, k, batch int) (*memReader, *memReader) {
	rng := rand.New(rand.NewPCG(0, 1))
	w := make([]float64, d*k)
	for i := range w {
		w[i] = rng.NormFloat64() / math.Sqrt(float64(d))
	}
	return synthetic(mem, nPriv, d, k, batch, true, rng, w), synthetic(mem, nPub, d, k, batch, false, rng, w)
}

// BenchmarkLabelPeerWorkload is the peer's workload (100,000 private rows,
// 250 teachers, GNMax σ = 40 on every public row, 2 classes) from memory to
// a discarding writer: training, encoding, voting and exact noise. Reading
// Parquet and writing Arrow are measured by the whole-process comparison
// script (.ci/bench/label_speed.sh).
func BenchmarkLabelPeerWorkload(b *testing.B) {
	for _, tc := range []struct{ pub, d int }{{1_000_000, 64}, {1_000_000, 14}} {
		b.Run(fmt.Sprintf("public=%d/d=%d", tc.pub, tc.d), func(b *testing.B) {
			mem := memory.DefaultAllocator
			priv, pub := syntheticPair(mem, 100_000, tc.pub, tc.d, 2, 65536)
			seed := uint64(1)
			cfg := Config{Label: "label", Classes: []string{"0", "1"}, Teachers: 250, Learner: "logreg",
				Mechanism: MechanismGNMax, Params: MechanismParams{Sigma: "40"}, Delta: 1e-5,
				PublicRows: int64(tc.pub), Seed: &seed, BatchSize: 65536}
			for b.Loop() {
				priv.next, pub.next = 0, 0
				l, err := New(cfg, priv.schema, pub.schema)
				if err != nil {
					b.Fatal(err)
				}
				out := &discard{}
				if _, err := l.Run(context.Background(), priv, pub, out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(tc.pub)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkVoteBatch compares the two ways the stream counts a batch's
// votes, side by side on the same data: encoding the whole batch row-major
// then voting on it, and column-major tiles encoded and voted on per
// goroutine (voteTiles). 250 logistic teachers, 64 float64 features,
// batches of 16,384 rows cycling through 128 MiB so that the columns come
// from memory, as in a stream.
func BenchmarkVoteBatch(b *testing.B) {
	mem := memory.DefaultAllocator
	const d, rows = 64, 16384
	priv, pub := syntheticPair(mem, 25_000, 16*rows, d, 2, rows)
	var names []string
	for _, f := range pub.schema.Fields() {
		names = append(names, f.Name)
	}
	enc, err := learners.FitEncoder(pub.schema, names, pub.recs[:1], learners.EncoderOptions{})
	if err != nil {
		b.Fatal(err)
	}
	x := learners.NewMatrix(0, enc.Dim())
	lr, err := learners.NewLearner("logreg", learners.LearnerOptions{MaxIter: 10})
	if err != nil {
		b.Fatal(err)
	}
	var models []learners.Model
	for i := range 250 {
		rec := priv.recs[0].NewSlice(int64(i*60), int64(i*60+60))
		if err := enc.Encode(rec, x); err != nil {
			b.Fatal(err)
		}
		lab := rec.Column(rec.Schema().FieldIndices("label")[0]).(*array.Int64)
		y := make([]int32, x.Rows)
		for r := range y {
			y[r] = int32(lab.Value(r))
		}
		rec.Release()
		m, err := lr.Fit(x, y, 2)
		if err != nil {
			b.Fatal(err)
		}
		models = append(models, m)
	}
	ens, err := learners.NewEnsemble(models, 2)
	if err != nil {
		b.Fatal(err)
	}
	st := &runState{enc: enc, ens: ens}
	st.tileBufs.New = func() any { return new([]float32) }
	bt := &batch{counts: make([]int32, 2*rows), x: learners.NewMatrix(0, enc.Dim())}
	defer func(old int) { tileBytes = old }(tileBytes)
	for _, path := range []string{"encode-then-vote", "tiles=32KiB", "tiles=128KiB", "tiles=512KiB"} {
		b.Run(path, func(b *testing.B) {
			switch path {
			case "tiles=32KiB":
				tileBytes = 32 << 10
			case "tiles=128KiB":
				tileBytes = 128 << 10
			case "tiles=512KiB":
				tileBytes = 512 << 10
			}
			i := 0
			for b.Loop() {
				rec := pub.recs[i%len(pub.recs)]
				i++
				bt.rec, bt.queryN = rec, int(rec.NumRows())
				if path != "encode-then-vote" {
					err = st.voteTiles(rec, st.stacked(), bt)
				} else {
					if err = enc.Encode(rec, bt.x); err == nil {
						ens.Votes(bt.x, bt.counts)
					}
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(rows*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
