package main

import (
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

	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/learners"
)

// splitParquet writes the rows of a testdata file as Parquet shards of at
// most per rows into dir.
func splitParquet(t *testing.T, name, dir string, per int) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema, recs := readAll(t, filepath.Join("testdata", name), mem)
	defer release(recs)
	n := 0
	for _, rec := range recs {
		for lo := int64(0); lo < rec.NumRows(); lo += int64(per) {
			w, err := arrowio.Create(filepath.Join(dir, fmt.Sprintf("part-%05d.parquet", n)), schema,
				arrowio.WriteOptions{Format: arrowio.WriteParquetFile, Allocator: mem})
			if err != nil {
				t.Fatal(err)
			}
			sl := rec.NewSlice(lo, min(rec.NumRows(), lo+int64(per)))
			err = w.Write(sl)
			sl.Release()
			if err == nil {
				err = w.Commit(nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
}

// trainTeachersFile trains the teachers of cfg from the shards of dir
// through label's exported API (as pate-beam-train does on Beam) and saves
// their ensemble file.
func trainTeachersFile(t *testing.T, cfg label.Config, dir, public, out string) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	cfg.Allocator = mem
	pub, err := arrowio.Open(public, arrowio.ReadOptions{BatchSize: 4096, Allocator: mem, CountRows: true})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	shards, err := arrowio.ListShards(dir)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		shard, row int
		class      int32
		x          []float32
	}
	var rows [][]row
	var spec *label.TeacherSpec
	for s, sh := range shards {
		r, err := arrowio.Open(sh.Path, arrowio.ReadOptions{BatchSize: 1000, Allocator: mem})
		if err != nil {
			t.Fatal(err)
		}
		if spec == nil {
			cfg.PublicRows = pub.NumRows()
			lab, err := label.New(cfg, r.Schema(), pub.Schema())
			if err != nil {
				t.Fatal(err)
			}
			if spec, err = lab.TeacherSpec(context.Background(), pub); err != nil {
				t.Fatal(err)
			}
			rows = make([][]row, spec.Teachers)
		}
		m, first := spec.NewMapper(), 0
		for {
			rec, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			err = m.Map(rec, func(i, k int, c int32, x []float32) error {
				rows[k] = append(rows[k], row{s, first + i, c, slices.Clone(x)})
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
		if models[k], err = spec.Train(x, y); err != nil {
			t.Fatal(err)
		}
	}
	f, err := spec.Ensemble(models, version)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Save(out); err != nil {
		t.Fatal(err)
	}
}

// rowStrings reads an output file as one string per row, every column.
func rowStrings(t *testing.T, path string) []string {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	_, recs := readAll(t, path, mem)
	defer release(recs)
	var out []string
	for _, rec := range recs {
		for i := range int(rec.NumRows()) {
			var b strings.Builder
			for c := range int(rec.NumCols()) {
				b.WriteString(rec.Column(c).ValueStr(i) + "|")
			}
			out = append(out, b.String())
		}
	}
	return out
}

// TestLabelTeachersFrom: pate label --teachers-from polls teachers trained
// apart from it (here through label's API; on Beam in label/beam) and
// releases the labels of a local run over the same shards with the same
// seed, teachers and classes, every row and column; pate audit verifies
// its report; what cannot go with it is refused as bad usage.
func TestLabelTeachersFrom(t *testing.T) {
	dir := t.TempDir()
	shards := filepath.Join(dir, "sensitive")
	if err := os.Mkdir(shards, 0o755); err != nil {
		t.Fatal(err)
	}
	splitParquet(t, "adult_train.parquet", shards, 9000)
	public := filepath.Join("testdata", "adult_public.parquet")
	seed := uint64(31)
	teachers := filepath.Join(dir, "adult.teachers")
	trainTeachersFile(t, label.Config{Label: "income", Classes: []string{"0", "1"}, Teachers: 30, Learner: "logreg",
		Epsilon: 1, Delta: 1e-5, BatchSize: 16384, Seed: &seed}, shards, public, teachers)

	local, fromFile := filepath.Join(dir, "local.arrow"), filepath.Join(dir, "from-file.arrow")
	report := filepath.Join(dir, "from-file.json")
	common := []string{"--public", public, "--epsilon", "1", "--delta", "1e-5", "--seed", "31", "-q"}
	code, _, stderr := pate(t, append([]string{"label", "--private", shards, "--label", "income", "--classes", "0,1",
		"--teachers", "30", "--mechanism", "confident-gnmax", "--no-ledger", "-o", local}, common...)...)
	if code != 0 {
		t.Fatalf("local run: exit %d: %s", code, stderr)
	}
	code, _, stderr = pate(t, append([]string{"label", "--teachers-from", teachers, "--dataset", "adult", "-o", fromFile,
		"--report", report}, common...)...)
	if code != 0 {
		t.Fatalf("--teachers-from: exit %d: %s", code, stderr)
	}
	want, got := rowStrings(t, local), rowStrings(t, fromFile)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("--teachers-from released %d rows, the local run %d: they differ", len(got), len(want))
	}
	rep, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rep), label.TeachersFromPlan) || !strings.Contains(string(rep), `"teachers": 30`) {
		t.Errorf("the report does not say the 30 teachers came from a file:\n%.600s", rep)
	}
	if code, out, stderr := pate(t, "audit", report); code != 0 {
		t.Fatalf("pate audit: exit %d: %s%s", code, out, stderr)
	}

	corrupt := filepath.Join(dir, "corrupt.teachers")
	b, err := os.ReadFile(teachers)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(corrupt, b, 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"label", "--public", public, "--epsilon", "1", "--delta", "1e-5", "-o", filepath.Join(dir, "x.arrow")}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no dataset name", []string{"--teachers-from", teachers}, "--dataset"},
		{"with --private", []string{"--teachers-from", teachers, "--dataset", "a", "--private", shards}, "--private"},
		{"row mechanism", []string{"--teachers-from", teachers, "--dataset", "a", "--mechanism", "dp-logreg"}, "dp-logreg"},
		{"other teacher count", []string{"--teachers-from", teachers, "--dataset", "a", "--teachers", "7"}, "30 teachers"},
		{"other label", []string{"--teachers-from", teachers, "--dataset", "a", "--label", "sex"}, "income"},
		{"other classes", []string{"--teachers-from", teachers, "--dataset", "a", "--classes", "0,1,2"}, "classes"},
		{"corrupted file", []string{"--teachers-from", corrupt, "--dataset", "a"}, "corrupted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := pate(t, append(slices.Clone(base), tc.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d saying %q", code, stderr, exitUsage, tc.want)
			}
		})
	}
}
