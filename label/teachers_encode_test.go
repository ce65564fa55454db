package label

import (
	"context"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/learners"
)

var encodeSchema = arrow.NewSchema([]arrow.Field{
	{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "emb", Type: arrow.FixedSizeListOf(6, arrow.PrimitiveTypes.Float32), Nullable: true},
}, nil)

// encodeBatch builds rows start… of encodeSchema; with nulls, a null x, s
// and embedding element now and then (which take the encoder's slow path).
func encodeBatch(mem memory.Allocator, start, n int, nulls bool) arrow.Record {
	b := array.NewRecordBuilder(mem, encodeSchema)
	defer b.Release()
	lb := b.Field(2).(*array.FixedSizeListBuilder)
	vb := lb.ValueBuilder().(*array.Float32Builder)
	for i := start; i < start+n; i++ {
		if nulls && i%7 == 3 {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.Float64Builder).Append(float64(i%13) - 4)
		}
		if nulls && i%5 == 1 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append([]string{"a", "b", "c"}[i%3])
		}
		lb.Append(true)
		for j := range 6 {
			if nulls && i%11 == 2 && j == 4 {
				vb.AppendNull()
			} else {
				vb.Append(float32((i*(j+2))%17) / 3)
			}
		}
	}
	return b.NewRecord()
}

// TestSpillEncode: every sensitive row is spilled once, with its number,
// its unit's keyed hash and identity, its label and its encoded values bit
// for bit those of the batch encoded at once, in the order of the file
// within its bucket; whether the spill stays in memory or goes to its file
// (a budget of a few records), with and without nulls, with numeric,
// string and embedding features.
func TestSpillEncode(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	defer func(b int) { spillBudget = b }(spillBudget)
	for _, tc := range []struct {
		name     string
		features []string
		nulls    bool
		budget   int
		sizes    []int
	}{
		{"embedding in memory", []string{"emb"}, false, 1 << 20, []int{5, 1, 9, 4, 0, 3}},
		{"embedding with nulls, in the file", []string{"emb"}, true, 100, []int{5, 1, 9, 4, 0, 3}},
		{"mixed in memory", []string{"x", "s", "emb"}, false, 1 << 20, []int{5, 1, 9, 4, 0, 3}},
		{"mixed with nulls, in the file", []string{"x", "s", "emb"}, true, 1, []int{5, 1, 9, 4, 0, 3}},
		// A bucket overflows its one record's share many times.
		{"many rows, a record a bucket", []string{"x", "s", "emb"}, true, 1, []int{7000, 3, 9000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spillBudget = tc.budget
			sizes := tc.sizes
			var recs []arrow.Record
			var starts []int
			total := 0
			for _, n := range sizes {
				recs = append(recs, encodeBatch(mem, total, n, tc.nulls))
				starts = append(starts, total)
				total += n
			}
			defer releaseAll(recs)
			enc, err := learners.FitEncoder(encodeSchema, tc.features, recs, learners.EncoderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			dim := enc.Dim()
			whole := learners.NewMatrix(total, dim)
			for bi, rec := range recs {
				p, err := enc.Prepare(rec)
				if err != nil {
					t.Fatal(err)
				}
				lo := starts[bi] * dim
				p.EncodeRows(0, p.Rows(), &learners.Matrix{Data: whole.Data[lo : lo+p.Rows()*dim]})
			}
			seed := uint64(3)
			l := &Labeler{cfg: Config{Seed: &seed, Teachers: 4},
				labelFields: []arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}}
			s, err := l.ingestRecords(recs, enc)
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			if tc.budget < 1000 { // the rest of every bucket to the file too
				for b := range spillBuckets {
					if len(s.bufs[b]) > 0 {
						if err := s.flushBucket(b, "test"); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			if inFile := s.f != nil; inFile != (tc.budget < 1000) {
				t.Errorf("spilled to a file: %v, want %v", inFile, tc.budget < 1000)
			}
			if s.total != total {
				t.Fatalf("total %d, want %d", s.total, total)
			}
			part := newPartitioner(4, l.source(streamPartition))
			seen := make([]bool, total)
			x := make([]float32, dim)
			var buf, scratch []byte
			for b := range spillBuckets {
				if buf, err = s.bucket(b, &scratch); err != nil {
					t.Fatal(err)
				}
				last := -1
				for o := 0; o < len(buf); o += s.recSize {
					r := spillRec(buf[o : o+s.recSize])
					i := r.row()
					if seen[i] || i <= last {
						t.Fatalf("bucket %d: row %d out of order or twice", b, i)
					}
					seen[i], last = true, i
					if bucketOf(r.hash()) != b {
						t.Errorf("row %d in bucket %d, its hash's is %d", i, b, bucketOf(r.hash()))
					}
					id := r.id()
					if r.hash() != part.hash(id[:]) {
						t.Errorf("row %d: hash is not the partition key's", i)
					}
					r.x(s.nl, x)
					if !slices.Equal(x, whole.Row(i)) {
						t.Errorf("row %d = %v, want %v", i, x, whole.Row(i))
					}
					want := uint32(0)
					if !(tc.nulls && i%5 == 1) {
						want = 1 + s.dicts[0].index[[]string{"a", "b", "c"}[i%3]]
					}
					if r.code(0) != want {
						t.Errorf("row %d: label code %d, want %d", i, r.code(0), want)
					}
				}
			}
			for i, ok := range seen {
				if !ok {
					t.Errorf("row %d not spilled", i)
				}
			}
		})
	}
}

// TestLastBucket: the bucket of a teacher's largest hash, from the partition
// function itself (a binary search for the first hash of the next teacher).
func TestLastBucket(t *testing.T) {
	for _, k := range []int{1, 2, 3, 250, 4095, 4096, 5000, 1 << 20} {
		for _, tt := range []int{0, 1, k / 3, k / 2, k - 2, k - 1} {
			if tt < 0 || tt >= k {
				continue
			}
			end := ^uint64(0) // the largest hash of teacher tt
			if tt+1 < k {
				lo, hi := uint64(0), ^uint64(0) // the first hash of teacher tt+1 is in (lo, hi]
				for hi-lo > 1 {
					mid := lo + (hi-lo)/2
					if teacherOfHash(mid, k) > tt {
						hi = mid
					} else {
						lo = mid
					}
				}
				end = lo
			}
			if got, want := lastBucket(tt, k), bucketOf(end); got != want {
				t.Errorf("k %d, teacher %d: last bucket %d, want %d", k, tt, got, want)
			}
		}
	}
}

// TestSpillFileSameTeachers: teachers of every learner vote alike, and the
// row mechanisms get the same rows, whether the spill keeps every row in
// memory or writes most of them to its file (a budget of one record a
// bucket). -short tries two learners.
func TestSpillFileSameTeachers(t *testing.T) {
	e := newNBEnv(t, 12000) // about 3 rows a bucket: most go to the file
	defer func(b int) { spillBudget = b }(spillBudget)
	type result struct {
		votes []int32
		x     []float32
		y     []int32
	}
	run := func(learner string, budget int) result {
		spillBudget = budget
		l, err := e.labeler("", learner)
		if err != nil {
			t.Fatal(err)
		}
		l.bins = learners.PublicBins(e.xPub, learners.DefaultMaxBins)
		ens, _, err := l.trainTeachers(context.Background(), e.d, e.enc)
		if err != nil {
			t.Fatal(err)
		}
		v := make([]int32, e.xPub.Rows*len(nbClasses))
		ens.Votes(e.xPub, v)
		x, y, err := e.rows(MechanismDPLogReg, e.d)
		if err != nil {
			t.Fatal(err)
		}
		return result{v, x.Data, y}
	}
	learnerNames := []string{"logreg", "gbt"}
	if !testing.Short() {
		learnerNames = append(learnerNames, "nb", "tree", "knn")
	}
	for _, learner := range learnerNames {
		t.Run(learner, func(t *testing.T) {
			mem, file := run(learner, 64<<20), run(learner, 1)
			if !slices.Equal(mem.votes, file.votes) {
				t.Errorf("votes differ between the spill in memory and in its file")
			}
			if !slices.Equal(mem.x, file.x) || !slices.Equal(mem.y, file.y) {
				t.Errorf("the row mechanisms' rows differ between the spill in memory and in its file")
			}
		})
	}
}
