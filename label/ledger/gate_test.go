package ledger

import (
	"errors"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

type sink struct{ rows int64 }

func (s *sink) Write(rec arrow.Record) error { s.rows += rec.NumRows(); return nil }

// TestGatedWriter: nothing passes the gate before the begin entry is
// written, and nothing at all when it is refused (which cancels the run).
func TestGatedWriter(t *testing.T) {
	refused := errors.New("refused")
	tests := []struct {
		name       string
		err        error
		wantRows   int64
		wantCancel bool
	}{
		{"written", nil, 3, false},
		{"refused", refused, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			b := array.NewInt64Builder(mem)
			b.AppendValues([]int64{1, 2, 3}, nil)
			col := b.NewArray()
			b.Release()
			rec := array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{col}, 3)
			col.Release()
			defer rec.Release()

			release := make(chan struct{})
			cancelled := false
			g := StartGate(func() (*Run, error) { <-release; return nil, tc.err }, func() { cancelled = true })
			out := &sink{}
			w := &GatedWriter{W: out, Gate: g}
			done := make(chan error)
			go func() { done <- w.Write(rec) }()
			select {
			case <-done:
				t.Fatal("a record passed the gate before the begin entry was written")
			default:
			}
			close(release)
			if err := <-done; !errors.Is(err, tc.err) {
				t.Fatalf("Write: %v, want %v", err, tc.err)
			}
			if out.rows != tc.wantRows || w.Rows != tc.wantRows || cancelled != tc.wantCancel {
				t.Errorf("passed %d rows (counted %d), cancelled %v; want %d, %v", out.rows, w.Rows, cancelled, tc.wantRows, tc.wantCancel)
			}
		})
	}
}
