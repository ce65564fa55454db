package label

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"

	"github.com/pate-tool/pate/io/arrowio"
)

// failingReader serves its batches, then fails.
type failingReader struct {
	memReader
	err error
}

func (r *failingReader) Read() (arrow.Record, error) {
	rec, err := r.memReader.Read()
	if errors.Is(err, io.EOF) {
		return nil, r.err
	}
	return rec, err
}

// TestRunStopsWithLiveParquetPublic runs a labeller whose public file is a
// Parquet file read by the row-group workers, which start decoding when it
// is opened, so that its decompression overlaps the private phase. When the
// run fails before the stream (the sensitive data fails to read) or is
// cancelled, the run returns its error and closing the public reader then
// stops its workers and gives back every buffer they decoded.
func TestRunStopsWithLiveParquetPublic(t *testing.T) {
	gen := memory.NewGoAllocator()
	priv, pub := syntheticPair(gen, 2000, 20000, 8, 2, 1000)
	defer releaseAll(priv.recs)
	defer releaseAll(pub.recs)
	path := filepath.Join(t.TempDir(), "public.parquet")
	writeParquet(t, path, pub)
	for _, tc := range []struct {
		name   string
		fail   bool // the sensitive reader fails after its first batch
		cancel bool // the context is cancelled before the run
		want   error
	}{
		{"sensitive read fails", true, false, errDisk},
		{"cancelled", false, true, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			goroutines := runtime.NumGoroutine()
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			r, err := arrowio.Open(path, arrowio.ReadOptions{BatchSize: 1000, Allocator: mem, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond) // let the workers decode ahead
			sens := &failingReader{memReader: memReader{schema: priv.schema, recs: priv.recs}, err: io.EOF}
			if tc.fail {
				sens.recs, sens.err = priv.recs[:1], errDisk
			}
			seed := uint64(3)
			cfg := Config{Label: "label", Classes: []string{"0", "1"}, Teachers: 10, Learner: "logreg",
				Mechanism: MechanismGNMax, Params: MechanismParams{Sigma: "40"}, Delta: 1e-5,
				PublicRows: 20000, Seed: &seed, BatchSize: 1000, Allocator: mem}
			l, err := New(cfg, priv.schema, r.Schema())
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			if tc.cancel {
				cancel()
			}
			_, err = l.Run(ctx, sens, r, &discard{})
			cancel()
			if !errors.Is(err, tc.want) {
				t.Errorf("run: %v, want %v", err, tc.want)
			}
			if err := r.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			for deadline := time.Now().Add(2 * time.Second); runtime.NumGoroutine() > goroutines && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > goroutines {
				t.Errorf("%d goroutines after close, %d before open", n, goroutines)
			}
		})
	}
}

var errDisk = errors.New("disk error")

// writeParquet writes r's batches to path as Parquet, in row groups of
// 4,096 rows compressed with zstd.
func writeParquet(t *testing.T, path string, r *memReader) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithMaxRowGroupLength(4096))
	w, err := pqarrow.NewFileWriter(r.schema, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range r.recs {
		if err := w.WriteBuffered(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
