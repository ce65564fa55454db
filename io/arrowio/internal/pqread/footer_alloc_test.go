package pqread

import (
	"bytes"
	"os"
	"runtime"
	"testing"

	"github.com/apache/arrow/go/v15/parquet/file"
)

// TestFooterBytesPerChunk checks what parsing a footer allocates per
// column chunk. A file of many row groups has tens of thousands of chunks
// (4M rows of DuckDB's 10,000-row groups, 64 columns: 25,000), each with
// its statistics, and Thrift v0.17 read every binary field, an 8-byte
// minimum included, into a buffer of 512 bytes or more: 150 MB of footer
// for that file, a peak RSS 1.4x that of the same rows at 1M.
func TestFooterBytesPerChunk(t *testing.T) {
	path := t.TempDir() + "/many.parquet"
	const rgRows = 50
	writePlainFile(t, path, plainFile{rows: 200 * rgRows, rgRows: rgRows})
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	open := func() int {
		r, err := file.NewParquetReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		return r.NumRowGroups() * r.MetaData().Schema.NumColumns()
	}
	open() // warm up
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	chunks := open()
	runtime.ReadMemStats(&after)
	per := float64(after.TotalAlloc-before.TotalAlloc) / float64(chunks)
	t.Logf("%d chunks, %.0f bytes allocated per chunk", chunks, per)
	if per > 1500 {
		t.Errorf("parsing the footer allocates %.0f bytes per column chunk, want at most 1500", per)
	}
}
