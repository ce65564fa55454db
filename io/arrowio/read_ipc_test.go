package arrowio

import (
	"github.com/pate-tool/pate/io/arrowio/internal/pqread"
	"github.com/pate-tool/pate/io/arrowio/internal/pqread/pqtest"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// TestIPCRecycledBuffers reads Arrow IPC files and streams of many
// batches of one size (every column kind of pqtest.PlainSchema: nulls, strings,
// dates; bodies plain and zstd-compressed), releasing each batch before
// reading the next, with the recycler's poisoning on: buffers are reused,
// every value read is right (a reused buffer Arrow did not overwrite
// whole, or one still in use, would show), and nothing leaks.
func TestIPCRecycledBuffers(t *testing.T) {
	tune := pqread.DefaultTuning()
	tune.PoisonRecycled = true
	const rows, batch = 9_100, 700
	ref := pqtest.PlainRecord(memory.NewGoAllocator(), 0, rows)
	defer ref.Release()
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		file bool
		opts []ipc.Option
	}{
		{"file", true, nil},
		{"file/zstd", true, []ipc.Option{ipc.WithZstd()}},
		{"stream", false, nil},
		{"stream/lz4", false, []ipc.Option{ipc.WithLZ4()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, filepath.Base(tc.name)+".arrow")
			writeIPCBatches(t, path, ref, batch, tc.file, tc.opts)
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			st := new(pqread.Stats)
			r, err := Open(path, ReadOptions{Allocator: mem, tune: tune, stats: st})
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Format(); (got == FormatIPCFile) != tc.file {
				t.Fatalf("read as %v", got)
			}
			at := readReleasing(t, r, pqtest.PlainSchema, ref)
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if at != rows {
				t.Fatalf("read %d rows, want %d", at, rows)
			}
			if st.RecycledBuffers.Load() == 0 {
				t.Error("no buffer was recycled")
			}
		})
	}
}

// writeIPCBatches writes rec to path as an Arrow IPC file (or stream) of
// batches of batch rows.
func writeIPCBatches(t *testing.T, path string, rec arrow.Record, batch int64, file bool, opts []ipc.Option) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	opts = append([]ipc.Option{ipc.WithSchema(rec.Schema())}, opts...)
	var w interface {
		Write(arrow.Record) error
		Close() error
	}
	if file {
		if w, err = ipc.NewFileWriter(f, opts...); err != nil {
			t.Fatal(err)
		}
	} else {
		w = ipc.NewWriter(f, opts...)
	}
	for off := int64(0); off < rec.NumRows(); off += batch {
		s := rec.NewSlice(off, min(off+batch, rec.NumRows()))
		err := w.Write(s)
		s.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
