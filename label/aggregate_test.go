package label

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// collect keeps the labels and sources written.
// runCollect runs a Labeler of cfg over the sensitive and public readers
// and returns its report and what it wrote.
func runCollect(t *testing.T, cfg Config, priv, pub *memReader) (*Report, *collect) {
	t.Helper()
	rep, out, err := runCollectErr(t, cfg, priv, pub)
	if err != nil {
		t.Fatal(err)
	}
	return rep, out
}

// runCollectErr is runCollect returning the run's error.
func runCollectErr(t *testing.T, cfg Config, priv, pub *memReader) (*Report, *collect, error) {
	t.Helper()
	l, err := New(cfg, priv.schema, pub.schema)
	if err != nil {
		t.Fatal(err)
	}
	out := &collect{}
	rep, err := l.Run(context.Background(), priv, pub, out)
	return rep, out, err
}

type collect struct {
	labels  []int64
	sources []string
}

func (c *collect) Write(rec arrow.Record) error {
	n := int(rec.NumCols())
	lab := rec.Column(n - 2).(*array.Int64)
	src := rec.Column(n - 1).(*array.String)
	for i := 0; i < int(rec.NumRows()); i++ {
		if lab.IsNull(i) {
			c.labels = append(c.labels, -1)
		} else {
			c.labels = append(c.labels, lab.Value(i))
		}
		c.sources = append(c.sources, src.Value(i))
	}
	return nil
}

// voteFiles makes the same random votes as counts and as predictions, in
// batches of the given size.
func voteFiles(mem memory.Allocator, rows, teachers, classes, batch int, seed uint64) (*memReader, *memReader) {
	rng := rand.New(rand.NewPCG(seed, 2))
	var cf, pf []arrow.Field
	for c := 0; c < classes; c++ {
		cf = append(cf, arrow.Field{Name: fmt.Sprintf("class_%d", c), Type: arrow.PrimitiveTypes.Int64})
	}
	for t := 0; t < teachers; t++ {
		pf = append(pf, arrow.Field{Name: fmt.Sprintf("teacher_%d", t), Type: arrow.PrimitiveTypes.Int32})
	}
	counts := &memReader{schema: arrow.NewSchema(cf, nil)}
	preds := &memReader{schema: arrow.NewSchema(pf, nil)}
	for start := 0; start < rows; start += batch {
		n := min(batch, rows-start)
		cb := array.NewRecordBuilder(mem, counts.schema)
		pb := array.NewRecordBuilder(mem, preds.schema)
		for i := 0; i < n; i++ {
			// A skewed vote: most teachers agree on a random class.
			top := rng.IntN(classes)
			hist := make([]int64, classes)
			for t := 0; t < teachers; t++ {
				c := top
				if rng.Float64() < 0.3 {
					c = rng.IntN(classes)
				}
				hist[c]++
				pb.Field(t).(*array.Int32Builder).Append(int32(c))
			}
			for c, v := range hist {
				cb.Field(c).(*array.Int64Builder).Append(v)
			}
		}
		counts.recs = append(counts.recs, cb.NewRecord())
		preds.recs = append(preds.recs, pb.NewRecord())
		cb.Release()
		pb.Release()
	}
	return counts, preds
}

func (r *memReader) release() {
	for _, rec := range r.recs {
		rec.Release()
	}
}

func TestAggregateCountsAndPredictionsAgree(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	tests := []struct {
		mech    string
		classes int
		params  MechanismParams
	}{
		{MechanismConfidentGNMax, 2, MechanismParams{Threshold: 20, Sigma1: "5", Sigma2: "3"}},
		{MechanismGNMax, 10, MechanismParams{Sigma: "4"}},
		{MechanismLNMax, 3, MechanismParams{LaplaceScale: "2.5"}},
	}
	for _, tc := range tests {
		t.Run(tc.mech, func(t *testing.T) {
			counts, preds := voteFiles(mem, 3000, 25, tc.classes, 700, 9)
			defer counts.release()
			defer preds.release()
			seed := uint64(42)
			run := func(format string, votes *memReader) *collect {
				cfg := Config{Teachers: 25, VotesFormat: format, NumClasses: tc.classes, Mechanism: tc.mech, Params: tc.params,
					Delta: 1e-5, PublicRows: 3000, Seed: &seed, BatchSize: 512, Allocator: mem}
				l, err := NewAggregate(cfg, votes.schema, nil)
				if err != nil {
					t.Fatal(err)
				}
				out := &collect{}
				if _, err := l.RunVotes(context.Background(), votes, nil, out); err != nil {
					t.Fatal(err)
				}
				return out
			}
			a, b := run(VotesCounts, counts), run(VotesPredictions, preds)
			if len(a.labels) != 3000 || len(b.labels) != 3000 {
				t.Fatalf("rows %d and %d", len(a.labels), len(b.labels))
			}
			answered := 0
			for i := range a.labels {
				if a.labels[i] != b.labels[i] || a.sources[i] != b.sources[i] {
					t.Fatalf("row %d: counts give %d (%s), predictions %d (%s)", i, a.labels[i], a.sources[i], b.labels[i], b.sources[i])
				}
				if a.sources[i] == SourceTeachers {
					answered++
				}
			}
			if answered == 0 {
				t.Error("nothing answered")
			}
		})
	}
}

// rowsOnly is a public input with no columns.
func rowsOnly(mem memory.Allocator, sizes ...int) *memReader {
	s := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	r := &memReader{schema: s}
	id := int64(0)
	for _, n := range sizes {
		b := array.NewInt64Builder(mem)
		for i := 0; i < n; i++ {
			b.Append(id)
			id++
		}
		a := b.NewArray()
		r.recs = append(r.recs, array.NewRecord(s, []arrow.Array{a}, int64(n)))
		a.Release()
		b.Release()
	}
	return r
}

func TestAggregateWithPublicLockstepAndErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	seed := uint64(1)
	cfg := Config{Teachers: 25, Mechanism: MechanismGNMax, Params: MechanismParams{Sigma: "3"}, Delta: 1e-5,
		PublicRows: 1000, Seed: &seed, BatchSize: 256, Allocator: mem, VotesName: "votes.parquet", PublicName: "public.parquet"}
	t.Run("batch boundaries differ", func(t *testing.T) {
		counts, p1 := voteFiles(mem, 1000, 25, 2, 300, 3)
		defer counts.release()
		defer p1.release()
		pub := rowsOnly(mem, 1000) // the votes come in batches of 300
		defer pub.release()
		alone, p2 := voteFiles(mem, 1000, 25, 2, 1000, 3)
		defer alone.release()
		defer p2.release()
		l, err := NewAggregate(cfg, counts.schema, pub.schema)
		if err != nil {
			t.Fatal(err)
		}
		got := &collect{}
		if _, err := l.RunVotes(context.Background(), counts, pub, got); err != nil {
			t.Fatal(err)
		}
		l2, _ := NewAggregate(cfg, alone.schema, nil)
		want := &collect{}
		if _, err := l2.RunVotes(context.Background(), alone, nil, want); err != nil {
			t.Fatal(err)
		}
		// The votes are read in step with the public rows whatever their
		// batch boundaries: the labels equal those of the votes alone.
		if len(got.labels) != 1000 || len(want.labels) != 1000 {
			t.Fatalf("rows %d, %d", len(got.labels), len(want.labels))
		}
		for i := range got.labels {
			if got.labels[i] != want.labels[i] {
				t.Fatalf("row %d: %d with public batches, %d without", i, got.labels[i], want.labels[i])
			}
		}
	})
	bad := []struct {
		name  string
		edit  func(b *array.RecordBuilder, row int)
		rows  []int // public batch sizes
		votes int
		want  string
	}{
		{"negative count", func(b *array.RecordBuilder, row int) {
			if row == 17 {
				b.Field(0).(*array.Int64Builder).Append(-1)
			} else {
				b.Field(0).(*array.Int64Builder).Append(20)
			}
			b.Field(1).(*array.Int64Builder).Append(5)
		}, []int{100}, 100, "row 17"},
		{"too many votes", func(b *array.RecordBuilder, row int) {
			b.Field(0).(*array.Int64Builder).Append(20)
			if row == 42 {
				b.Field(1).(*array.Int64Builder).Append(6)
			} else {
				b.Field(1).(*array.Int64Builder).Append(5)
			}
		}, []int{100}, 100, "row 42"},
		{"fewer votes than public rows", func(b *array.RecordBuilder, row int) {
			b.Field(0).(*array.Int64Builder).Append(20)
			b.Field(1).(*array.Int64Builder).Append(5)
		}, []int{60, 60}, 100, "fewer than public.parquet"},
		{"more votes than public rows", func(b *array.RecordBuilder, row int) {
			b.Field(0).(*array.Int64Builder).Append(20)
			b.Field(1).(*array.Int64Builder).Append(5)
		}, []int{50, 30}, 100, "more rows than public.parquet"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			s := arrow.NewSchema([]arrow.Field{{Name: "class_0", Type: arrow.PrimitiveTypes.Int64}, {Name: "class_1", Type: arrow.PrimitiveTypes.Int64}}, nil)
			b := array.NewRecordBuilder(mem, s)
			for i := 0; i < tc.votes; i++ {
				tc.edit(b, i)
			}
			votes := &memReader{schema: s, recs: []arrow.Record{b.NewRecord()}}
			b.Release()
			defer votes.release()
			pub := rowsOnly(mem, tc.rows...)
			defer pub.release()
			l, err := NewAggregate(cfg, s, pub.schema)
			if err != nil {
				t.Fatal(err)
			}
			_, err = l.RunVotes(context.Background(), votes, pub, &collect{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "votes.parquet") {
				t.Fatalf("error %v, want one naming %q and the file", err, tc.want)
			}
		})
	}
	t.Run("class index out of range", func(t *testing.T) {
		c3, preds := voteFiles(mem, 50, 5, 3, 50, 4)
		defer c3.release()
		defer preds.release()
		c := cfg
		c.VotesFormat, c.NumClasses, c.Teachers = VotesPredictions, 2, 0
		l, err := NewAggregate(c, preds.schema, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = l.RunVotes(context.Background(), preds, nil, &collect{})
		if err == nil || !strings.Contains(err.Error(), "is not a class index in [0, 2)") {
			t.Fatalf("error %v", err)
		}
	})
}

func TestReadVoteCounts(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	s := arrow.NewSchema([]arrow.Field{{Name: "class_0", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "class_1", Type: arrow.PrimitiveTypes.Int32}}, nil)
	tests := []struct {
		name string
		c0   []int64
		null int // row of class_0 made null, -1 for none
		want string
	}{
		{"ok", []int64{3, 0, 5}, -1, ""},
		{"negative", []int64{3, -2, 5}, -1, `row 1, column "class_0" has a negative count -2`},
		{"null", []int64{3, 0, 5}, 2, `row 2, column "class_0" is null`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := array.NewRecordBuilder(mem, s)
			for i, v := range tc.c0 {
				if i == tc.null {
					b.Field(0).AppendNull()
				} else {
					b.Field(0).(*array.Int64Builder).Append(v)
				}
				b.Field(1).(*array.Int32Builder).Append(int32(i))
			}
			r := &memReader{schema: s, recs: []arrow.Record{b.NewRecord()}}
			b.Release()
			defer r.release()
			votes, err := ReadVoteCounts(r, "v.parquet")
			if tc.want == "" {
				if err != nil || len(votes) != 3 || votes[2][0] != 5 || votes[2][1] != 2 {
					t.Fatalf("votes %v, error %v", votes, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "v.parquet") {
				t.Fatalf("error %v, want one naming %q and the file", err, tc.want)
			}
		})
	}
}
