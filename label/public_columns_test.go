package label

import (
	"context"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// keepAll keeps every batch written (retained) for comparison.
type keepAll struct{ recs []arrow.Record }

func (k *keepAll) Write(rec arrow.Record) error {
	rec.Retain()
	k.recs = append(k.recs, rec)
	return nil
}

func (k *keepAll) release() {
	for _, r := range k.recs {
		r.Release()
	}
}

// narrowed returns r's batches projected onto cols.
func narrowed(r *memReader, cols []string) *memReader {
	idx := make([]int, len(cols))
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		idx[i] = r.schema.FieldIndices(c)[0]
		fields[i] = r.schema.Field(idx[i])
	}
	out := &memReader{schema: arrow.NewSchema(fields, nil)}
	for _, rec := range r.recs {
		arrs := make([]arrow.Array, len(idx))
		for i, j := range idx {
			arrs[i] = rec.Column(j)
		}
		out.recs = append(out.recs, array.NewRecord(out.schema, arrs, rec.NumRows()))
	}
	return out
}

// TestPublicColumns: PublicColumns names the features and the kept
// columns, in the public schema's order (nil when that is every column),
// and a Labeler told to UsePublic of the public data narrowed to them
// writes what it writes from the whole public data.
func TestPublicColumns(t *testing.T) {
	for _, tc := range []struct {
		name           string
		features, keep []string
		want           []string
	}{
		{"every feature, one kept", nil, []string{"x0"}, []string{"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7"}},
		{"two features, a third kept", []string{"x6", "x1"}, []string{"x3"}, []string{"x1", "x3", "x6"}},
		{"nothing kept", []string{"x2"}, []string{}, []string{"x2"}},
		{"every column", nil, nil, nil}, // the public data without its label column
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			run := func(narrow bool) (*keepAll, []string) {
				priv, pub, _ := studentData(mem)
				defer priv.release()
				defer pub.release()
				seed := uint64(3)
				cfg := studentConfig(&seed)
				cfg.Allocator, cfg.Keep = mem, tc.keep
				if tc.features != nil {
					cfg.Features = tc.features
				}
				if tc.keep == nil {
					pub = narrowed(pub, []string{"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7"})
					defer pub.release() // (the whole data's release is deferred above)
				}
				l, err := New(cfg, priv.schema, pub.schema)
				if err != nil {
					t.Fatal(err)
				}
				cols := l.PublicColumns()
				in := pub
				if narrow && cols != nil {
					in = narrowed(pub, cols)
					defer in.release()
					if err := l.UsePublic(in.schema); err != nil {
						t.Fatal(err)
					}
				}
				out := &keepAll{}
				if _, err := l.Run(context.Background(), priv, in, out); err != nil {
					t.Fatal(err)
				}
				return out, cols
			}
			whole, cols := run(false)
			defer whole.release()
			if !slices.Equal(cols, tc.want) {
				t.Fatalf("PublicColumns %q, want %q", cols, tc.want)
			}
			narrow, _ := run(true)
			defer narrow.release()
			a := array.NewTableFromRecords(whole.recs[0].Schema(), whole.recs)
			defer a.Release()
			b := array.NewTableFromRecords(narrow.recs[0].Schema(), narrow.recs)
			defer b.Release()
			if !a.Schema().Equal(b.Schema()) || a.NumRows() != b.NumRows() {
				t.Fatalf("narrowed output %v (%d rows), want %v (%d rows)", b.Schema(), b.NumRows(), a.Schema(), a.NumRows())
			}
			for k := 0; k < int(a.NumCols()); k++ {
				if !array.ChunkedEqual(a.Column(k).Data(), b.Column(k).Data()) {
					t.Errorf("column %q differs with the public data narrowed", a.Schema().Field(k).Name)
				}
			}
		})
	}
}
