package teachertrain

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/learners"
)

func TestMain(m *testing.M) { ptest.Main(m) }

var testdata = filepath.Join("..", "..", "..", "testdata")

// writeShards writes the sensitive Adult split as Parquet shards of uneven
// sizes into dir, and returns its rows.
func writeShards(t *testing.T, dir string, sizes []int64) int64 {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	r, err := arrowio.Open(filepath.Join(testdata, "adult_train.parquet"), arrowio.ReadOptions{BatchSize: 1000, Allocator: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	shard, inShard := 0, int64(0)
	var w *arrowio.Writer
	var total int64
	next := func() {
		if w != nil {
			if err := w.Commit(nil); err != nil {
				t.Fatal(err)
			}
		}
		w, err = arrowio.Create(filepath.Join(dir, fmt.Sprintf("part-%05d.parquet", shard)), r.Schema(),
			arrowio.WriteOptions{Format: arrowio.WriteParquetFile, Allocator: mem})
		if err != nil {
			t.Fatal(err)
		}
		shard++
		inShard = 0
	}
	next()
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for lo := int64(0); lo < rec.NumRows(); {
			if shard <= len(sizes) && inShard == sizes[shard-1] {
				next()
			}
			n := rec.NumRows() - lo
			if shard <= len(sizes) {
				n = min(n, sizes[shard-1]-inShard)
			}
			sl := rec.NewSlice(lo, lo+n)
			err := w.Write(sl)
			sl.Release()
			if err != nil {
				t.Fatal(err)
			}
			lo += n
			inShard += n
			total += n
		}
		rec.Release()
	}
	if err := w.Commit(nil); err != nil {
		t.Fatal(err)
	}
	return total
}

// labelRows runs a pate label run (local training, or the teachers of
// file when given) and returns every output row as text.
func labelRows(t *testing.T, cfg label.Config, shards, public string, file *label.TeacherFile) ([]string, *label.Report) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	cfg.Allocator = mem
	pub, err := arrowio.Open(public, arrowio.ReadOptions{BatchSize: cfg.BatchSize, Allocator: mem, CountRows: true})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	cfg.PublicRows = pub.NumRows()
	out := &rowText{}
	var rep *label.Report
	if file == nil {
		sens, err := arrowio.Open(shards, arrowio.ReadOptions{BatchSize: cfg.BatchSize, Allocator: mem, NoSpill: true})
		if err != nil {
			t.Fatal(err)
		}
		defer sens.Close()
		lab, err := label.New(cfg, sens.Schema(), pub.Schema())
		if err != nil {
			t.Fatal(err)
		}
		if rep, err = lab.Run(context.Background(), sens, pub, out); err != nil {
			t.Fatal(err)
		}
	} else {
		cfg.Classes, cfg.Label = nil, ""
		lab, err := label.NewFromTeachers(cfg, file, pub.Schema())
		if err != nil {
			t.Fatal(err)
		}
		if rep, err = lab.RunTeachers(context.Background(), pub, out); err != nil {
			t.Fatal(err)
		}
	}
	return out.rows, rep
}

// rowText keeps every row written as text (every column).
type rowText struct{ rows []string }

func (w *rowText) Write(rec arrow.Record) error {
	for i := range int(rec.NumRows()) {
		var b strings.Builder
		for c := range int(rec.NumCols()) {
			b.WriteString(rec.Column(c).ValueStr(i))
			b.WriteByte('|')
		}
		w.rows = append(w.rows, b.String())
	}
	return nil
}

// localEnsemble trains the spec's teachers without Beam, through the same
// exported API, and returns the ensemble file's bytes.
func localEnsemble(t *testing.T, spec *label.TeacherSpec, shards []ShardRef) []byte {
	t.Helper()
	type row struct {
		shard, row int
		class      int32
		x          []float32
	}
	rows := make([][]row, spec.Teachers)
	for _, sh := range shards {
		r, err := openShard(sh.Path, sh.Path, 777, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		m := spec.NewMapper()
		first := 0
		for {
			rec, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			err = m.Map(rec, func(i, k int, c int32, x []float32) error {
				rows[k] = append(rows[k], row{sh.Index, first + i, c, slices.Clone(x)})
				return nil
			})
			first += int(rec.NumRows())
			rec.Release()
			if err != nil {
				t.Fatal(err)
			}
		}
		r.Close()
	}
	models := make([]learners.Model, spec.Teachers)
	for k, rs := range rows {
		slices.SortFunc(rs, func(a, b row) int { return cmp.Or(cmp.Compare(a.shard, b.shard), cmp.Compare(a.row, b.row)) })
		x := learners.NewMatrix(len(rs), spec.Encoder.Dim())
		y := make([]int32, len(rs))
		for i, r := range rs {
			copy(x.Row(i), r.x)
			y[i] = r.class
		}
		var err error
		if models[k], err = spec.Train(x, y); err != nil {
			t.Fatal(err)
		}
	}
	f, err := spec.Ensemble(models, "test")
	if err != nil {
		t.Fatal(err)
	}
	return f.Bytes()
}

// TestPipelineLabelsAsLocalRun is the acceptance check: the pipeline on
// prism trains the teachers from sharded sensitive Parquet; their ensemble
// file is the one the exported API trains without Beam, byte for byte; and
// pate label's run polling it releases the labels a local run over the
// shards' folder releases with the same seed, teachers and classes, row for
// row and column for column.
func TestPipelineLabelsAsLocalRun(t *testing.T) {
	if testing.Short() {
		t.Skip("trains teachers on prism")
	}
	tests := []struct {
		name     string
		teachers int
		unit     string
		sizes    []int64 // rows of each shard but the last
	}{
		{"rows, 4 shards", 20, "", []int64{7000, 13, 9000}},
		{"privacy unit, 3 shards, empty teachers", 40, "education", []int64{5000, 12000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			shardDir := filepath.Join(dir, "sensitive")
			if err := os.Mkdir(shardDir, 0o755); err != nil {
				t.Fatal(err)
			}
			writeShards(t, shardDir, tc.sizes)
			seed := uint64(23)
			public := filepath.Join(testdata, "adult_public.parquet")
			o := Options{Public: public, Private: shardDir, Output: filepath.Join(dir, "adult.teachers"),
				Label: "income", Classes: []string{"0", "1"}, Teachers: tc.teachers, PrivacyUnit: tc.unit, Seed: &seed,
				BatchSize: 4096, Version: "test"}
			spec, shards, err := Prepare(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if len(shards) != len(tc.sizes)+1 {
				t.Fatalf("%d shards listed, want %d", len(shards), len(tc.sizes)+1)
			}
			p, s := beam.NewPipelineWithRoot()
			if err := Build(s, spec, shards, o); err != nil {
				t.Fatal(err)
			}
			if err := ptest.Run(p); err != nil {
				t.Fatalf("pipeline: %v", err)
			}
			got, err := os.ReadFile(o.Output)
			if err != nil {
				t.Fatal(err)
			}
			if want := localEnsemble(t, spec, shards); !bytes.Equal(got, want) {
				t.Fatalf("the pipeline's ensemble (%d bytes) is not the one trained without Beam (%d bytes)", len(got), len(want))
			}
			file, err := label.LoadTeachers(o.Output)
			if err != nil {
				t.Fatal(err)
			}

			cfg := label.Config{Label: "income", Classes: []string{"0", "1"}, Teachers: tc.teachers, Learner: "logreg",
				PrivacyUnit: tc.unit, Mechanism: label.MechanismConfidentGNMax, Epsilon: 1, Delta: 1e-5,
				Student: "logreg", Select: label.SelectUncertain, MaxQueries: 200, BatchSize: 4096, Seed: &seed}
			want, _ := labelRows(t, cfg, shardDir, public, nil)
			cfg.PrivacyUnit = ""
			gotRows, rep := labelRows(t, cfg, "", public, file)
			if rep.Teachers != tc.teachers || !strings.Contains(rep.Plan, label.TeachersFromPlan) {
				t.Errorf("report: %d teachers, plan %q", rep.Teachers, rep.Plan)
			}
			if len(gotRows) != len(want) || len(want) == 0 {
				t.Fatalf("%d rows from the pipeline's teachers, %d from the local run", len(gotRows), len(want))
			}
			for i := range want {
				if gotRows[i] != want[i] {
					t.Fatalf("row %d: %q from the pipeline's teachers, %q from the local run", i, gotRows[i], want[i])
				}
			}
		})
	}
}

// TestPrepareRefusals: what the pipeline cannot do is refused before any
// sensitive row is read.
func TestPrepareRefusals(t *testing.T) {
	dir := t.TempDir()
	csvDir := filepath.Join(dir, "csv")
	if err := os.Mkdir(csvDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(csvDir, "a.csv"), []byte("age,income\n1,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	public := filepath.Join(testdata, "adult_public.parquet")
	base := Options{Public: public, Private: filepath.Join(testdata, "adult_train.parquet"), Output: filepath.Join(dir, "t"),
		Label: "income", Classes: []string{"0", "1"}, Teachers: 5}
	tests := []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"no classes", func(o *Options) { o.Classes = nil }, "declare the classes"},
		{"no teachers", func(o *Options) { o.Teachers = 0 }, "teachers"},
		{"CSV shards", func(o *Options) { o.Private = csvDir }, "CSV"},
		{"no shard", func(o *Options) { o.Private = filepath.Join(dir, "none-*.parquet") }, "matches no"},
		{"unknown learner", func(o *Options) { o.Learner = "nope" }, "learner"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			tc.edit(&o)
			_, _, err := Prepare(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// TestPipelineRefusesReorderedShard: a shard whose columns are in another
// order than the first's fails the pipeline, naming the shard: rows are
// identified by their values in the first shard's column order.
func TestPipelineRefusesReorderedShard(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a pipeline on prism")
	}
	dir := t.TempDir()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	r, err := arrowio.Open(filepath.Join(testdata, "adult_train.parquet"), arrowio.ReadOptions{BatchSize: 500, Allocator: mem})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Read()
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	fields, cols := slices.Clone(rec.Schema().Fields()), slices.Clone(rec.Columns())
	slices.Reverse(fields)
	slices.Reverse(cols)
	rev := array.NewRecord(arrow.NewSchema(fields, nil), cols, rec.NumRows())
	defer rev.Release()
	for i, x := range []arrow.Record{rec, rev} {
		w, err := arrowio.Create(filepath.Join(dir, fmt.Sprintf("part-%d.arrow", i)), x.Schema(), arrowio.WriteOptions{Allocator: mem})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(x); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(nil); err != nil {
			t.Fatal(err)
		}
	}
	o := Options{Public: filepath.Join(testdata, "adult_public.parquet"), Private: dir, Output: filepath.Join(t.TempDir(), "t"),
		Label: "income", Classes: []string{"0", "1"}, Teachers: 3}
	spec, shards, err := Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	p, s := beam.NewPipelineWithRoot()
	if err := Build(s, spec, shards, o); err != nil {
		t.Fatal(err)
	}
	if err := ptest.Run(p); err == nil || !strings.Contains(err.Error(), "part-1.arrow") {
		t.Fatalf("pipeline: %v; want an error naming the reordered shard", err)
	}
	if _, err := os.Stat(o.Output); err == nil {
		t.Error("the pipeline wrote an ensemble file")
	}
}
