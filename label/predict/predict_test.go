package predict

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/learners"
)

var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "x", Type: arrow.PrimitiveTypes.Float64},
	{Name: "c", Type: arrow.BinaryTypes.String},
}, nil)

func testBatch(mem memory.Allocator, n int, seed uint64) arrow.Record {
	rng := rand.New(rand.NewPCG(seed, 1))
	b := array.NewRecordBuilder(mem, testSchema)
	defer b.Release()
	for i := 0; i < n; i++ {
		b.Field(0).(*array.Float64Builder).Append(rng.NormFloat64())
		b.Field(1).(*array.StringBuilder).Append([]string{"u", "v", "w"}[rng.IntN(3)])
	}
	return b.NewRecord()
}

// testLabeler is a small labeler: a tree over x and c, int64 classes.
func testLabeler(t testing.TB) *Labeler {
	mem := memory.NewGoAllocator()
	rec := testBatch(mem, 300, 3)
	defer rec.Release()
	enc, err := learners.FitEncoder(testSchema, []string{"x", "c"}, []arrow.Record{rec}, learners.EncoderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	x := learners.NewMatrix(0, enc.Dim())
	if err := enc.Encode(rec, x); err != nil {
		t.Fatal(err)
	}
	y := make([]int32, x.Rows)
	for i := range y {
		if x.Row(i)[0] > 0 {
			y[i] = 1
		}
	}
	tl, _ := learners.NewLearner("tree", learners.LearnerOptions{MaxDepth: 3})
	m, err := tl.Fit(x, y, 2)
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(&label.Trained{Encoder: enc, Model: m, Learner: "tree", Source: label.SourceStudent,
		Label: arrow.Field{Name: "y", Type: arrow.PrimitiveTypes.Int64}, Classes: []string{"0", "7"}},
		map[string]string{"pate.epsilon": "1", "pate.report": `{"guarantee":{"epsilon":1}}`}, Dataset{Private: "p"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func fileBytes(t testing.TB, l *Labeler) []byte {
	var b bytes.Buffer
	if _, err := l.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestReadRefuses: Read refuses a truncated, corrupted, foreign or
// future-version file with the error a caller can tell apart.
func TestReadRefuses(t *testing.T) {
	good := fileBytes(t, testLabeler(t))
	mod := func(f func([]byte)) []byte { b := bytes.Clone(good); f(b); return b }
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrFormat},
		{"foreign", []byte("ARROW1\x00\x00 and more bytes than a header"), ErrFormat},
		{"short magic", good[:5], ErrFormat},
		{"header only", good[:headerLen], ErrFormat},
		{"no checksum", good[:len(good)-checksumLen], ErrFormat},
		{"half", good[:len(good)/2], ErrFormat},
		{"flipped bit", mod(func(b []byte) { b[len(b)/2] ^= 4 }), ErrFormat},
		{"trailing byte", append(bytes.Clone(good), 1), ErrFormat},
		{"model length lies", mod(func(b []byte) {
			m := binary.LittleEndian.Uint64(b[12:])
			binary.LittleEndian.PutUint64(b[headerLen+int(m):], 1<<63)
		}), ErrFormat},
		{"version 2", mod(func(b []byte) { binary.LittleEndian.PutUint32(b[8:], 2) }), ErrVersion},
		{"version max", mod(func(b []byte) { binary.LittleEndian.PutUint32(b[8:], ^uint32(0)) }), ErrVersion},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Read(bytes.NewReader(tc.data)); !errors.Is(err, tc.want) {
				t.Fatalf("Read: %v, want %v", err, tc.want)
			}
		})
	}
}

// TestApply: a loaded labeler labels batches as the fitted model does,
// with the saving run's metadata and its own hash on the output.
func TestApply(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	l0 := testLabeler(t)
	l, err := Read(bytes.NewReader(fileBytes(t, l0)))
	if err != nil {
		t.Fatal(err)
	}
	if l.Hash() != l0.Hash() {
		t.Fatalf("hash %s after reading, %s before", l.Hash(), l0.Hash())
	}
	p, err := l.Plan(testSchema, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := testBatch(mem, 500, 9)
	defer rec.Release()
	out, err := p.NewApplier(mem).Label(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if got := out.Schema().Field(2).Name; got != "y" || out.NumCols() != 4 {
		t.Fatalf("output columns %v", out.Schema())
	}
	ys, src := out.Column(2).(*array.Int64), out.Column(3).(*array.String)
	for i := 0; i < int(out.NumRows()); i++ {
		v := rec.Column(0).(*array.Float64).Value(i)
		// The tree learnt y = [x > 0] on the same encoding: it maps
		// sign onto the classes 0 and 7, up to the split's threshold.
		if (v > 0.05 && ys.Value(i) != 7) || (v < -0.05 && ys.Value(i) != 0) || src.Value(i) != label.SourceStudent {
			t.Fatalf("row %d (x = %g): label %d source %q", i, v, ys.Value(i), src.Value(i))
		}
	}
	md := l.OutputMetadata()
	if h, _ := md.GetValue(MetaLabeler); h != l.Hash() {
		t.Errorf("pate.labeler %q, want %q", h, l.Hash())
	}
	if e, _ := md.GetValue("pate.epsilon"); e != "1" {
		t.Errorf("pate.epsilon %q, want 1", e)
	}
	if _, err := l.Plan(arrow.NewSchema(testSchema.Fields()[:1], nil), nil); err == nil {
		t.Error("a public schema without the feature c was accepted")
	}
	if _, err := l.Plan(arrow.NewSchema(append(testSchema.Fields(), arrow.Field{Name: "y", Type: arrow.BinaryTypes.String}), nil), nil); err == nil {
		t.Error("a public column named like the label was accepted")
	}
}

// FuzzRead: Read of untrusted bytes never panics; what it accepts writes
// back byte for byte and reads again with the same hash. Each input is
// read as it is and, so that mutations reach the manifest and the model,
// with a valid checksum appended.
func FuzzRead(f *testing.F) {
	good := fileBytes(f, testLabeler(f))
	f.Add(good)
	f.Add(good[:len(good)-checksumLen])
	f.Add(good[:len(good)/2])
	f.Add([]byte(Magic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		sum := sha256.Sum256(data)
		check(t, data)
		check(t, append(bytes.Clone(data), sum[:]...))
	})
}

func check(t *testing.T, data []byte) {
	{
		l, err := Read(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrVersion) {
				t.Fatalf("error %v wraps neither ErrFormat nor ErrVersion", err)
			}
			return
		}
		again := fileBytes(t, l)
		if !bytes.Equal(again, data) {
			t.Fatal("an accepted file does not write back unchanged")
		}
		if l2, err := Read(bytes.NewReader(again)); err != nil || l2.Hash() != l.Hash() {
			t.Fatalf("rereading: %v", err)
		}
	}
}

type sliceReader struct {
	s    *arrow.Schema
	recs []arrow.Record
}

func (r *sliceReader) Schema() *arrow.Schema { return r.s }
func (r *sliceReader) Read() (arrow.Record, error) {
	if len(r.recs) == 0 {
		return nil, io.EOF
	}
	rec := r.recs[0]
	r.recs = r.recs[1:]
	return rec, nil // the caller releases it
}

type collect struct{ labels []int64 }

func (c *collect) Write(rec arrow.Record) error {
	y := rec.Column(int(rec.NumCols()) - 2).(*array.Int64)
	c.labels = append(c.labels, y.Int64Values()...)
	return nil
}

// TestRunKeepsOrder: Run labels batches on several goroutines and writes
// them in input order, the same labels one Applier gives, and releases
// every batch.
func TestRunKeepsOrder(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	l := testLabeler(t)
	p, err := l.Plan(testSchema, []string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	a := p.NewApplier(mem)
	var want []int64
	var recs []arrow.Record
	for i := 0; i < 40; i++ {
		rec := testBatch(mem, 1+i*7, uint64(i))
		out, err := a.Label(rec)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, out.Column(1).(*array.Int64).Int64Values()...)
		out.Release()
		recs = append(recs, rec)
	}
	for _, workers := range []int{1, 3, 8} {
		t.Run(fmt.Sprint(workers), func(t *testing.T) {
			for _, r := range recs {
				r.Retain()
			}
			var c collect
			n, err := Run(context.Background(), p, &sliceReader{testSchema, slices.Clone(recs)}, &c, workers, mem)
			if err != nil || n != int64(len(want)) {
				t.Fatalf("Run: %d rows, %v; want %d", n, err, len(want))
			}
			if !slices.Equal(c.labels, want) {
				t.Fatal("Run's labels differ from one Applier's, or came out of order")
			}
		})
	}
	for _, r := range recs {
		r.Release()
	}
}
