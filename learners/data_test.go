package learners

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
)

// readParquet reads a whole Parquet file of ../testdata as record batches
// allocated from mem; the caller releases them.
func readParquet(tb testing.TB, mem memory.Allocator, name string) []arrow.Record {
	tb.Helper()
	f, err := os.Open("../testdata/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f, file.WithReadProps(parquet.NewReaderProperties(mem)))
	if err != nil {
		tb.Fatal(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 14}, mem)
	if err != nil {
		tb.Fatal(err)
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer rr.Release()
	var out []arrow.Record
	for rr.Next() {
		r := rr.Record()
		r.Retain()
		out = append(out, r)
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		tb.Fatal(err)
	}
	return out
}

func release(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}

// labelsOf reads the int64 label column of recs.
func labelsOf(tb testing.TB, recs []arrow.Record, name string) []int32 {
	tb.Helper()
	var y []int32
	for _, r := range recs {
		idx := r.Schema().FieldIndices(name)
		if len(idx) == 0 {
			tb.Fatalf("no label column %q", name)
		}
		col, ok := r.Column(idx[0]).(*array.Int64)
		if !ok {
			tb.Fatalf("label column %q is %s, want int64", name, r.Column(idx[0]).DataType())
		}
		for i := 0; i < col.Len(); i++ {
			y = append(y, int32(col.Value(i)))
		}
	}
	return y
}

func featuresExcept(s *arrow.Schema, label string) []string {
	var out []string
	for _, f := range s.Fields() {
		if f.Name != label {
			out = append(out, f.Name)
		}
	}
	return out
}

// encodeAll encodes recs into one matrix.
func encodeAll(tb testing.TB, enc *Encoder, recs []arrow.Record) *Matrix {
	tb.Helper()
	x := &Matrix{Cols: enc.Dim()}
	tmp := NewMatrix(0, enc.Dim())
	for _, r := range recs {
		if err := enc.Encode(r, tmp); err != nil {
			tb.Fatal(err)
		}
		x.Data = append(x.Data, tmp.Data...)
		x.Rows += tmp.Rows
	}
	return x
}

func subMatrix(x *Matrix, lo, hi int) *Matrix {
	return &Matrix{Rows: hi - lo, Cols: x.Cols, Data: x.Data[lo*x.Cols : hi*x.Cols]}
}

// dataset is an encoded train/test split.
type dataset struct {
	xtr, xte *Matrix
	ytr, yte []int32
	names    []string
}

var (
	adultOnce, bcOnce sync.Once
	adultData, bcData dataset
)

// adult: train on adult_train, test on adult_test, label income; the encoder
// is fitted on adult_test's features (the public side).
func loadAdult(tb testing.TB) dataset {
	adultOnce.Do(func() {
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		defer mem.AssertSize(tb, 0)
		tr := readParquet(tb, mem, "adult_train.parquet")
		defer release(tr)
		te := readParquet(tb, mem, "adult_test.parquet")
		defer release(te)
		enc, err := FitEncoder(te[0].Schema(), featuresExcept(te[0].Schema(), "income"), te, EncoderOptions{})
		if err != nil {
			tb.Fatal(err)
		}
		adultData = dataset{
			xtr: encodeAll(tb, enc, tr), ytr: labelsOf(tb, tr, "income"),
			xte: encodeAll(tb, enc, te), yte: labelsOf(tb, te, "income"),
			names: enc.FeatureNames(),
		}
	})
	if adultData.xtr == nil {
		tb.Fatal("loading Adult failed earlier")
	}
	return adultData
}

// breast cancer: rows 0–399 train, 400–568 test, label "label"; the encoder
// is fitted on the training rows' features.
func loadBreastCancer(tb testing.TB) dataset {
	bcOnce.Do(func() {
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		defer mem.AssertSize(tb, 0)
		recs := readParquet(tb, mem, "breast_cancer.parquet")
		defer release(recs)
		if len(recs) != 1 {
			tb.Fatalf("breast_cancer: %d batches, want 1", len(recs))
		}
		all := recs[0]
		tr := all.NewSlice(0, 400)
		defer tr.Release()
		enc, err := FitEncoder(tr.Schema(), featuresExcept(tr.Schema(), "label"), []arrow.Record{tr}, EncoderOptions{})
		if err != nil {
			tb.Fatal(err)
		}
		x := encodeAll(tb, enc, []arrow.Record{all})
		y := labelsOf(tb, []arrow.Record{all}, "label")
		bcData = dataset{xtr: subMatrix(x, 0, 400), ytr: y[:400], xte: subMatrix(x, 400, x.Rows), yte: y[400:], names: enc.FeatureNames()}
	})
	if bcData.xtr == nil {
		tb.Fatal("loading breast_cancer failed earlier")
	}
	return bcData
}
