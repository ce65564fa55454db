package shardlabel

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/predict"
	"github.com/pate-tool/pate/learners"
)

func TestMain(m *testing.M) { ptest.Main(m) }

var publicSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "colour", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// publicBatch makes n synthetic public rows starting at id first.
func publicBatch(mem memory.Allocator, rng *rand.Rand, first, n int) arrow.Record {
	b := array.NewRecordBuilder(mem, publicSchema)
	defer b.Release()
	colours := []string{"red", "green", "blue", "teal"}
	for i := 0; i < n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(first + i))
		if rng.IntN(50) == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.Float64Builder).Append(rng.NormFloat64() * 3)
		}
		b.Field(2).(*array.StringBuilder).Append(colours[rng.IntN(len(colours))])
	}
	return b.NewRecord()
}

func writeIPC(t *testing.T, path string, recs []arrow.Record) {
	t.Helper()
	w, err := arrowio.Create(path, publicSchema, arrowio.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(nil); err != nil {
		t.Fatal(err)
	}
}

// testLabeler fits a student-like logistic regression on public rows with
// made-up labels and saves it as a labeler.
func testLabeler(t *testing.T, recs []arrow.Record, path string) *predict.Labeler {
	t.Helper()
	enc, err := learners.FitEncoder(publicSchema, []string{"x", "colour"}, recs, learners.EncoderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	x := learners.NewMatrix(0, enc.Dim())
	if err := enc.Encode(recs[0], x); err != nil {
		t.Fatal(err)
	}
	y := make([]int32, x.Rows)
	for i := range y {
		row := x.Row(i)
		if row[0]+row[2] > 0.3 {
			y[i] = 1
		}
		if row[0] < -1 {
			y[i] = 2
		}
	}
	lr, _ := learners.NewLearner("logreg", learners.LearnerOptions{})
	m, err := lr.Fit(x, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	tr := &label.Trained{Encoder: enc, Model: m, Learner: "logreg", Source: label.SourceStudent,
		Label: arrow.Field{Name: "y", Type: arrow.BinaryTypes.String}, Classes: []string{"a", "b", "c"}}
	lab, err := predict.New(tr, map[string]string{"pate.epsilon": "1", "pate.delta": "1e-06", "pate.mechanism": "confident-gnmax",
		"pate.report": `{"guarantee":{"epsilon":1}}`}, predict.Dataset{Private: "test"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := lab.Save(path); err != nil {
		t.Fatal(err)
	}
	return lab
}

// rowsOf reads an Arrow file as one string per row (every column).
func rowsOf(t *testing.T, path string) ([]string, arrow.Metadata) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	r, err := arrowio.Open(path, arrowio.ReadOptions{Allocator: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []string
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			s := ""
			for c := 0; c < int(rec.NumCols()); c++ {
				s += rec.Column(c).ValueStr(i) + "|"
			}
			out = append(out, s)
		}
		rec.Release()
	}
	return out, r.Schema().Metadata()
}

// TestPipelineUnionIsPredict: the pipeline on the local runner labels 4
// shards; the union of its outputs, in shard order, equals pate predict's
// labelling of the whole file row for row, and the manifest lists every
// shard with its rows and the labeler's hash.
func TestPipelineUnionIsPredict(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	for _, d := range []string{in, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(17, 4))
	const shards, per = 4, 2500
	var all []arrow.Record
	for s := 0; s < shards; s++ {
		rec := publicBatch(mem, rng, s*per, per)
		all = append(all, rec)
		writeIPC(t, filepath.Join(in, fmt.Sprintf("part-%05d.arrow", s)), []arrow.Record{rec})
	}
	whole := filepath.Join(dir, "whole.arrow")
	writeIPC(t, whole, all)
	labPath := filepath.Join(dir, "t.labeler")
	lab := testLabeler(t, all, labPath)
	for _, r := range all {
		r.Release()
	}
	want := filepath.Join(dir, "whole-labelled.arrow")
	if _, err := LabelFile(context.Background(), lab, whole, want, Options{BatchSize: 1000}); err != nil {
		t.Fatal(err)
	}

	manifest := filepath.Join(out, "manifest.jsonl")
	p, s := beam.NewPipelineWithRoot()
	Build(s, Options{Labeler: labPath, Input: in, OutDir: out, Manifest: manifest, BatchSize: 700, Workers: 2})
	if err := ptest.Run(p); err != nil {
		t.Fatalf("pipeline: %v", err)
	}

	wantRows, wantMD := rowsOf(t, want)
	var got []string
	f, err := os.Open(manifest)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var sh Shard
		if err := json.Unmarshal(sc.Bytes(), &sh); err != nil {
			t.Fatalf("manifest line %d: %v", n, err)
		}
		if wantShard := filepath.Join(in, fmt.Sprintf("part-%05d.arrow", n)); sh.Shard != wantShard || sh.Rows != per || sh.Labeler != lab.Hash() {
			t.Errorf("manifest line %d: %+v; want shard %s, %d rows, labeler %s", n, sh, wantShard, per, lab.Hash())
		}
		rows, md := rowsOf(t, sh.Output)
		if h, _ := md.GetValue(predict.MetaLabeler); h != lab.Hash() {
			t.Errorf("%s: pate.labeler %q, want %q", sh.Output, h, lab.Hash())
		}
		if e, _ := md.GetValue("pate.epsilon"); e != "1" {
			t.Errorf("%s: pate.epsilon %q, want the saving run's 1", sh.Output, e)
		}
		got = append(got, rows...)
		n++
	}
	if n != shards {
		t.Fatalf("manifest has %d lines, want %d", n, shards)
	}
	if len(got) != len(wantRows) {
		t.Fatalf("%d rows in the shards' outputs, %d in predict's", len(got), len(wantRows))
	}
	for i := range got {
		if got[i] != wantRows[i] {
			t.Fatalf("row %d: pipeline %q, predict %q", i, got[i], wantRows[i])
		}
	}
	if h, _ := wantMD.GetValue(predict.MetaLabeler); h != lab.Hash() {
		t.Errorf("predict's output: pate.labeler %q", h)
	}
}
