package label

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/learners"
)

// trainElsewhere trains the teachers of spec from the sensitive batches
// (each a shard, in order) through the exported API, as a pipeline does:
// map every row to its teacher with its order key, group, sort each
// teacher's rows by their order, train.
func trainElsewhere(t *testing.T, spec *TeacherSpec, shards []arrow.Record) []learners.Model {
	t.Helper()
	type row struct {
		shard, row int
		class      int32
		x          []float32
	}
	rows := make([][]row, spec.Teachers)
	// Shards mapped in reverse, by separate mappers, as workers would.
	for s := len(shards) - 1; s >= 0; s-- {
		m := spec.NewMapper()
		err := m.Map(shards[s], func(i, teacher int, class int32, x []float32) error {
			rows[teacher] = append(rows[teacher], row{s, i, class, slices.Clone(x)})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	dim := spec.Encoder.Dim()
	models := make([]learners.Model, spec.Teachers)
	for k, rs := range rows {
		slices.SortFunc(rs, func(a, b row) int { return cmp.Or(cmp.Compare(a.shard, b.shard), cmp.Compare(a.row, b.row)) })
		x := learners.NewMatrix(len(rs), dim)
		y := make([]int32, len(rs))
		for i, r := range rs {
			copy(x.Row(i), r.x)
			y[i] = r.class
		}
		m, err := spec.Train(x, y)
		if err != nil {
			t.Fatal(err)
		}
		models[k] = m
	}
	return models
}

// TestTeachersElsewhereLabelAsRun: teachers trained through the exported
// API (spec, mapper, Train, ensemble file) give the labels Run gives with
// the same seed, data and configuration, for a row as the unit and for a
// privacy-unit column, with teachers left without rows.
func TestTeachersElsewhereLabelAsRun(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	ss, sens := readParquet(t, "adult_train.parquet", mem)
	defer releaseAll(sens)
	ps, pub := readParquet(t, "adult_public.parquet", mem)
	defer releaseAll(pub)
	if len(sens) < 2 {
		t.Fatalf("want the sensitive data in several batches (shards), got %d", len(sens))
	}
	tests := []struct {
		name     string
		unit     string
		teachers int
		mech     string
		student  string
	}{
		{"rows, student", "", 20, MechanismConfidentGNMax, "logreg"},
		{"privacy unit, teachers only", "education", 25, MechanismGNMax, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seed := uint64(11)
			cfg := Config{Label: "income", Classes: []string{"1", "0"}, Teachers: tc.teachers, Learner: "logreg",
				Mechanism: tc.mech, Epsilon: 1, Delta: 1e-5, BatchSize: 4096, Seed: &seed, Allocator: mem,
				PublicRows: rowsOf(pub), Student: tc.student, MaxQueries: 300, PrivacyUnit: tc.unit}
			if tc.student != "" {
				cfg.Select = SelectUncertain
			}
			_, want := runCollect(t, cfg, &memReader{schema: ss, recs: sens}, &memReader{schema: ps, recs: pub})
			if n := countOf(want.sources, SourceTeachers); n < 20 {
				t.Fatalf("Run: the teachers answered %d queries: too few to compare", n)
			}

			l, err := New(cfg, ss, ps)
			if err != nil {
				t.Fatal(err)
			}
			spec, err := l.TeacherSpec(context.Background(), &memReader{schema: ps, recs: pub})
			if err != nil {
				t.Fatal(err)
			}
			// The spec as a pipeline ships it.
			js, err := json.Marshal(spec)
			if err != nil {
				t.Fatal(err)
			}
			if spec, err = ParseTeacherSpec(js); err != nil {
				t.Fatal(err)
			}
			file, err := spec.Ensemble(trainElsewhere(t, spec, sens), "test")
			if err != nil {
				t.Fatal(err)
			}
			file, err = ReadTeachers(bytes.NewReader(file.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			// The teachers themselves are Run's, vote for vote (the labels
			// alone barely tell partitions apart: teachers agree on most rows).
			l.cfg.Classes = cfg.Classes
			local, _, err := l.trainTeachers(context.Background(), sens, spec.Encoder)
			if err != nil {
				t.Fatal(err)
			}
			for _, rec := range pub {
				x := learners.NewMatrix(0, spec.Encoder.Dim())
				if err := spec.Encoder.Encode(rec, x); err != nil {
					t.Fatal(err)
				}
				v1, v2 := make([]int32, x.Rows*2), make([]int32, x.Rows*2)
				local.Votes(x, v1)
				file.ens.Votes(x, v2)
				if !slices.Equal(v1, v2) {
					t.Fatal("the file's teachers vote otherwise than Run's")
				}
			}
			cfg2 := cfg
			cfg2.Label, cfg2.Classes, cfg2.Teachers, cfg2.PrivacyUnit = "", nil, 0, ""
			l2, err := NewFromTeachers(cfg2, file, ps)
			if err != nil {
				t.Fatal(err)
			}
			got := &collect{}
			rep, err := l2.RunTeachers(context.Background(), &memReader{schema: ps, recs: pub}, got)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Teachers != tc.teachers || !bytes.Contains([]byte(rep.Plan), []byte(TeachersFromPlan)) {
				t.Errorf("report: %d teachers, plan %q", rep.Teachers, rep.Plan)
			}
			if !slices.Equal(got.labels, want.labels) || !slices.Equal(got.sources, want.sources) {
				n := 0
				for i := range min(len(got.labels), len(want.labels)) {
					if got.labels[i] != want.labels[i] {
						n++
					}
				}
				t.Fatalf("%d rows (%d labels differ) from the file's teachers, %d from Run", len(got.labels), n, len(want.labels))
			}
		})
	}
}

func countOf(s []string, v string) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

func rowsOf(recs []arrow.Record) int64 {
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	return n
}

// TestTeacherSpecRefusals: runs whose teachers cannot be trained apart
// from them are refused before any row is read, as bad input.
func TestTeacherSpecRefusals(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	priv, pub := syntheticPair(mem, 50, 50, 3, 3, 64)
	defer priv.release()
	defer pub.release()
	seed := uint64(1)
	base := Config{Label: "label", Classes: []string{"0", "1", "2"}, Teachers: 5, Learner: "logreg", Epsilon: 1, Delta: 1e-5,
		BatchSize: 64, Seed: &seed, Allocator: mem, PublicRows: 10}
	tests := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no classes", func(c *Config) { c.Classes = nil }, "classes"},
		{"row mechanism", func(c *Config) { c.Mechanism = MechanismDPLogReg }, "learns from the sensitive rows"},
		{"chooser", func(c *Config) { c.Choose = true }, "noisy count"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			tc.edit(&cfg)
			l, err := New(cfg, priv.schema, pub.schema)
			if err != nil {
				t.Fatal(err)
			}
			_, err = l.TeacherSpec(context.Background(), pub)
			if !errors.Is(err, ErrInvalidInput) || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
				t.Fatalf("got %v, want an invalid-input error saying %q", err, tc.want)
			}
		})
	}
}

// testTeacherFile is a small valid ensemble file: three teachers, one
// without rows.
func testTeacherFile(t testing.TB) []byte {
	mem := memory.NewGoAllocator()
	b := array.NewFloat64Builder(mem)
	b.AppendValues([]float64{-2, -1, 1, 2}, nil)
	col := b.NewArray()
	b.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{col}, 4)
	col.Release()
	defer rec.Release()
	enc, err := learners.FitEncoder(schema, []string{"x"}, []arrow.Record{rec}, learners.EncoderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := &TeacherSpec{Label: "y", LabelType: "int64", Classes: []string{"0", "1"}, Features: []string{"x"}, Encoder: enc,
		Teachers: 3, Learner: "logreg", Key: make([]byte, 32)}
	if err := spec.check(); err != nil {
		t.Fatal(err)
	}
	x := &learners.Matrix{Rows: 4, Cols: 1, Data: []float32{-2, -1, 1, 2}}
	y := []int32{0, 0, 1, 1}
	m, err := spec.Train(x, y)
	if err != nil {
		t.Fatal(err)
	}
	empty, err := spec.Train(learners.NewMatrix(0, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := spec.Ensemble([]learners.Model{m, empty, m}, "test")
	if err != nil {
		t.Fatal(err)
	}
	return f.Bytes()
}

// TestTeacherFileCorruption: a cut, a flipped byte, a newer version or
// bytes after the checksum are refused with ErrTeacherFormat or
// ErrTeacherVersion, never a panic; the intact file reads back.
func TestTeacherFileCorruption(t *testing.T) {
	good := testTeacherFile(t)
	f, err := ReadTeachers(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if f.Manifest().Teachers != 3 || f.ens.Teachers() != 3 {
		t.Fatalf("read back %d teachers", f.Manifest().Teachers)
	}
	if _, ok := f.models[1].(constModel); !ok {
		t.Errorf("teacher 1 read back as %T, want the teacher without rows", f.models[1])
	}
	newer := slices.Clone(good)
	newer[len(TeacherMagic)] = TeacherFormatVersion + 1
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrTeacherFormat},
		{"magic only", good[:len(TeacherMagic)], ErrTeacherFormat},
		{"not a teacher file", []byte("PATELBLR\x01\x00\x00\x00"), ErrTeacherFormat},
		{"newer version", newer, ErrTeacherVersion},
		{"trailing byte", append(slices.Clone(good), 0), ErrTeacherFormat},
		{"no checksum", good[:len(good)-32], ErrTeacherFormat},
	}
	// Every cut and every flipped byte (every 7th unless exhaustive).
	step := 7
	if os.Getenv("PATE_EXHAUSTIVE") != "" {
		step = 1
	}
	for n := 0; n < len(good); n += step {
		tests = append(tests, struct {
			name string
			data []byte
			want error
		}{"cut", good[:n], ErrTeacherFormat})
		flipped := slices.Clone(good)
		flipped[n] ^= 0x5a
		want := ErrTeacherFormat
		if n >= len(TeacherMagic) && n < len(TeacherMagic)+4 {
			want = nil // the version: newer or 0, either refused
		}
		tests = append(tests, struct {
			name string
			data []byte
			want error
		}{"flip", flipped, want})
	}
	for _, tc := range tests {
		_, err := ReadTeachers(bytes.NewReader(tc.data))
		if err == nil {
			t.Fatalf("%s (%d bytes): read", tc.name, len(tc.data))
		}
		if tc.want != nil && !errors.Is(err, tc.want) {
			t.Fatalf("%s (%d bytes): %v, want %v", tc.name, len(tc.data), err, tc.want)
		}
		if !errors.Is(err, ErrTeacherFormat) && !errors.Is(err, ErrTeacherVersion) {
			t.Fatalf("%s: %v is neither format error", tc.name, err)
		}
	}
}

// FuzzReadTeachers: whatever the bytes, ReadTeachers returns a file or a
// format error, never a panic; a file it reads is written back unchanged
// and reads again to the same teachers.
func FuzzReadTeachers(f *testing.F) {
	good := testTeacherFile(f)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(TeacherMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		tf, err := ReadTeachers(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrTeacherFormat) && !errors.Is(err, ErrTeacherVersion) {
				t.Fatalf("error %v is neither format error", err)
			}
			return
		}
		var b bytes.Buffer
		if _, err := tf.WriteTo(&b); err != nil || !bytes.Equal(b.Bytes(), data) {
			t.Fatalf("written back differently (%v)", err)
		}
		again, err := ReadTeachers(&b)
		if err != nil || again.Manifest().Teachers != tf.Manifest().Teachers {
			t.Fatalf("read again: %v", err)
		}
	})
}
