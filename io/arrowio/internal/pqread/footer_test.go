package pqread

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/metadata"

	"github.com/pate-tool/pate/io/arrowio/internal/pqread/pqtest"
)

// footerWindows is a tuning that sends every file down the windowed
// footer path, with windows of window bytes.
func footerWindows(window int) *Tuning {
	tune := DefaultTuning()
	tune.LazyFooterMin, tune.FooterWindowBytes = 0, window
	return tune
}

// arrowFooter is the footer of the Parquet file at path as Arrow decodes
// it, whole.
func arrowFooter(t testing.TB, path string) *metadata.FileMetaData {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	pf, err := file.NewParquetReader(f)
	if err != nil {
		t.Fatal(err)
	}
	return pf.MetaData()
}

// decodedRowGroups counts the row groups whose metadata lf holds.
func decodedRowGroups(lf *lazyFooter) int {
	lf.mu.Lock()
	defer lf.mu.Unlock()
	n := 0
	for _, g := range lf.md.RowGroups {
		if g != nil {
			n++
		}
	}
	return n
}

// TestLazyFooter reads a file of 300 row groups with its footer decoded a
// window at a time. It checks that the scan finds what Arrow's decoding of
// the whole footer finds, that a window decodes the same row group
// metadata, that the rows read are those of the footer decoded whole, and
// that the reader holds the metadata of no more row groups than it has in
// flight, none once read to the end.
func TestLazyFooter(t *testing.T) {
	// 300 row groups, with Arrow's schema in the key-value metadata.
	recs := pqtest.FixtureRecords(memory.NewGoAllocator(), 30000, 4000)
	defer pqtest.ReleaseAll(recs)
	path := filepath.Join(t.TempDir(), "rg.parquet")
	err := WriteParquet(path, pqtest.FixtureSchema(), recs, ParquetOptions{RowGroupRows: 100, Compression: compress.Codecs.Snappy, StoreSchema: true})
	if err != nil {
		t.Fatal(err)
	}
	want := readAllOf(t, path, ReadOptions{BatchSize: 1000}, "footer decoded whole")
	defer pqtest.ReleaseAll(want)
	whole := arrowFooter(t, path)
	dropStatistics(whole)
	for _, tc := range []struct {
		name            string
		window, workers int
		batch           int
	}{
		{"a row group a window", 1, 2, 1000},
		{"4 KB windows", 4 << 10, 2, 64},
		{"one worker", 1, 1, 100000},
		{"three workers", 2 << 10, 3, 333},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noGoroutineLeak(t)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			r, err := openFile(path, ReadOptions{Allocator: mem, Workers: tc.workers, BatchSize: tc.batch, Tuning: footerWindows(tc.window)})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			p := r.src.(*parallelParquet)
			lf := p.footer
			if lf == nil {
				t.Fatal("the footer was decoded whole")
			}
			if len(lf.rows) != len(whole.RowGroups) {
				t.Fatalf("the scan found %d row groups, Arrow %d", len(lf.rows), len(whole.RowGroups))
			}
			perWindow := 1
			for i := range lf.rows {
				if lf.rows[i] != whole.RowGroups[i].GetNumRows() {
					t.Fatalf("row group %d: the scan found %d rows, Arrow %d", i, lf.rows[i], whole.RowGroups[i].GetNumRows())
				}
				k := 1
				for i+k < len(lf.rows) && lf.spans[i+k+1]-lf.spans[i] <= int64(tc.window) {
					k++
				}
				perWindow = max(perWindow, k)
			}
			// A window repeats only what Thrift requires of a footer,
			// not the key-value metadata, which the reader has in md.
			if kv := lf.md.KeyValueMetadata(); kv.Len() == 0 || !reflect.DeepEqual(kv, whole.KeyValueMetadata()) {
				t.Fatal("the footer decoded without its row groups lost its key-value metadata")
			}
			if bare, err := metadata.NewFileMetaData(lf.window(nil, 0), nil); err != nil || bare.KeyValueMetadata().Len() != 0 {
				t.Fatalf("a window without row groups decodes with %v and key-value metadata, error %v", bare, err)
			}
			for _, i := range []int{0, 1, 150, len(lf.rows) - 1} {
				sub, err := lf.decode(i, i+1)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(sub.RowGroups[0], whole.RowGroups[i]) {
					t.Fatalf("row group %d decodes alone to other metadata than in the whole footer", i)
				}
			}
			var got []arrow.Record
			defer func() { pqtest.ReleaseAll(got) }()
			most := 0
			for {
				most = max(most, decodedRowGroups(lf))
				rec, err := r.Read()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, rec)
			}
			pqtest.SameRows(t, want[0].Schema(), got, want)
			// In flight: the window of tasks and the one being read out,
			// each of its row groups perhaps with the rest of its window.
			perTask := 1
			for _, task := range p.tasks {
				perTask = max(perTask, task.extra+1)
			}
			if limit := (p.window + 1) * (perTask + perWindow - 1); most > limit {
				t.Errorf("the reader held the metadata of %d row groups at once, want at most %d", most, limit)
			}
			if n := decodedRowGroups(lf); n != 0 {
				t.Errorf("%d row groups' metadata held after the last row", n)
			}
		})
	}
}

// TestLazyFooterMemory checks that an open reader of a file of many row
// groups holds a fraction of the memory of its footer decoded whole (with
// windows of 8 KB: the reader decodes the first at once).
func TestLazyFooterMemory(t *testing.T) {
	path := writeRowGroups(t, 20000, 10, compress.Codecs.Snappy) // 2,000 row groups
	held := func(windowed bool) uint64 {
		tune := footerWindows(8 << 10)
		if !windowed {
			tune.LazyFooterMin = 1 << 40
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r, err := openFile(path, ReadOptions{SelectLater: true, Tuning: tune})
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if windowed != (r.src.(*parallelParquet).footer != nil) {
			t.Fatalf("windowed footer %v, want %v", !windowed, windowed)
		}
		r.Close()
		return after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)
	}
	whole, windowed := held(false), held(true)
	t.Logf("heap held by an open reader: %d KB with the footer decoded whole, %d KB windowed", whole>>10, windowed>>10)
	if windowed*3 > whole {
		t.Errorf("the windowed footer holds %d KB, the whole one %d KB: want a third or less", windowed>>10, whole>>10)
	}
}

// TestCheckArrowSchema checks the Arrow schema stored in a footer's
// key-value metadata: a valid one passes, and one whose lengths Arrow's IPC
// reader would trust into a huge allocation is refused.
func TestCheckArrowSchema(t *testing.T) {
	recs := pqtest.FixtureRecords(memory.NewGoAllocator(), 10, 10)
	defer pqtest.ReleaseAll(recs)
	path := filepath.Join(t.TempDir(), "schema.parquet")
	if err := WriteParquet(path, pqtest.FixtureSchema(), recs, ParquetOptions{StoreSchema: true}); err != nil {
		t.Fatal(err)
	}
	stored := arrowFooter(t, path).KeyValueMetadata().FindValue("ARROW:schema")
	if stored == nil {
		t.Fatal("the fixture has no ARROW:schema")
	}
	valid, err := base64.StdEncoding.DecodeString(*stored)
	if err != nil {
		t.Fatal(err)
	}
	// valid: continuation marker, metadata length, the Message flatbuffer
	// (its root offset first), then the body (none).
	withLen := func(n uint32) []byte {
		b := bytes.Clone(valid)
		binary.LittleEndian.PutUint32(b[4:], n)
		return b
	}
	for _, tc := range []struct {
		name  string
		value string
		ok    bool
	}{
		{"as written", *stored, true},
		{"unpadded base64", base64.RawStdEncoding.EncodeToString(valid), true},
		{"no key", "", true},
		{"not base64 (pqarrow refuses it itself)", "%%%", true},
		{"cut short", base64.StdEncoding.EncodeToString(valid[:len(valid)/2]), false},
		{"metadata longer than the value", base64.StdEncoding.EncodeToString(withLen(1 << 30)), false},
		{"negative metadata length", base64.StdEncoding.EncodeToString(withLen(0x80000000)), false},
		{"root table out of bounds", base64.StdEncoding.EncodeToString(func() []byte {
			b := bytes.Clone(valid)
			binary.LittleEndian.PutUint32(b[8:], 1<<30)
			return b
		}()), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kv := metadata.KeyValueMetadata{}
			if tc.name != "no key" {
				if err := kv.Append("ARROW:schema", tc.value); err != nil {
					t.Fatal(err)
				}
			}
			err := checkArrowSchema(kv, DefaultTuning().MaxDecompressed)
			if (err == nil) != tc.ok {
				t.Fatalf("checkArrowSchema: %v, want ok %v", err, tc.ok)
			}
		})
	}
}
