package pqread

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/pierrec/lz4/v4"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/compress"

	"github.com/pate-tool/pate/io/arrowio/internal/pqread/pqtest"
)

// streamSmall sets tune to make every row group of more than 1000 rows a
// streamed one, in segments of seg rows, and returns it.
func streamSmall(tune *Tuning, seg int64) *Tuning {
	tune.MaxColumnwiseRows, tune.SegmentRows = 1000, seg
	return tune
}

// TestParquetStreamedRowGroups checks that row groups too large to decode
// whole, streamed by the fast path in segments that cut pages, read as
// pqarrow reads them: every codec, both page versions, small pages,
// dictionaries and their fallback to PLAIN, nullable and required
// columns, one worker and several.
func TestParquetStreamedRowGroups(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		pf   plainFile
		seg  int64
		huge bool // stream every PLAIN page larger than a segment
	}{
		{"none/v1/one-group", plainFile{rows: 7000, rgRows: 7000, codec: compress.Codecs.Uncompressed}, 1024, false},
		{"snappy/v1", plainFile{rows: 9000, rgRows: 4000, codec: compress.Codecs.Snappy}, 1500, false},
		{"zstd/v2", plainFile{rows: 6000, rgRows: 3000, codec: compress.Codecs.Zstd, v2: true}, 777, false},
		{"gzip/v1/small-pages", plainFile{rows: 5000, rgRows: 5000, codec: compress.Codecs.Gzip, smallPages: true}, 1000, false},
		{"snappy/v2/dictionary-fallback", plainFile{rows: 6000, rgRows: 6000, codec: compress.Codecs.Snappy, v2: true, dictionary: true, dictLimit: 2048}, 1300, false},
		{"none/v1/dictionary/small-pages", plainFile{rows: 5000, rgRows: 2500, codec: compress.Codecs.Uncompressed, dictionary: true, smallPages: true}, 1024, false},
		{"brotli/v1", plainFile{rows: 5000, rgRows: 5000, codec: compress.Codecs.Brotli}, 1100, false},
		{"brotli/v2/dictionary", plainFile{rows: 5000, rgRows: 5000, codec: compress.Codecs.Brotli, v2: true, dictionary: true}, 1100, false},
		{"zstd/v1/dictionary/legacy", plainFile{rows: 4000, rgRows: 4000, codec: compress.Codecs.Zstd, dictionary: true, legacy: true}, 999, false},
		{"none/v1/huge-pages", plainFile{rows: 9000, rgRows: 9000, codec: compress.Codecs.Uncompressed}, 1000, true},
		{"snappy/v1/huge-pages", plainFile{rows: 9000, rgRows: 4500, codec: compress.Codecs.Snappy}, 1000, true},
		{"gzip/v1/huge-pages", plainFile{rows: 6000, rgRows: 6000, codec: compress.Codecs.Gzip}, 1000, true},
		{"snappy/v2/huge-pages", plainFile{rows: 9000, rgRows: 9000, codec: compress.Codecs.Snappy, v2: true}, 1000, true},
		{"gzip/v2/huge-pages", plainFile{rows: 6000, rgRows: 6000, codec: compress.Codecs.Gzip, v2: true}, 1000, true},
		{"zstd/v1/huge-pages", plainFile{rows: 9000, rgRows: 9000, codec: compress.Codecs.Zstd}, 1000, true},
		{"zstd/v2/huge-pages", plainFile{rows: 9000, rgRows: 9000, codec: compress.Codecs.Zstd, v2: true}, 1000, true},
		{"zstd/v1/huge-pages/two-row-groups", plainFile{rows: 9000, rgRows: 4500, codec: compress.Codecs.Zstd}, 1000, true},
		{"zstd/v2/huge-pages/6000-rows", plainFile{rows: 6000, rgRows: 6000, codec: compress.Codecs.Zstd, v2: true}, 1000, true},
		{"none/v2/huge-pages/dictionary-fallback", plainFile{rows: 6000, rgRows: 6000, codec: compress.Codecs.Uncompressed, v2: true, dictionary: true, dictLimit: 2048}, 1000, true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && i%2 == 1 {
				t.Skip("-short: every other case")
			}
			path := filepath.Join(dir, "s"+strconv.Itoa(i)+".parquet")
			writePlainFile(t, path, tc.pf)
			want := pqarrowRows(t, path)
			tune := streamSmall(DefaultTuning(), tc.seg)
			if tc.huge {
				tune.HugePageBytes = 0
			}
			var streams int64 // pages streamed
			for _, workers := range []int{1, 2, 3} {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				st := new(Stats)
				got := readAllOf(t, path, ReadOptions{Allocator: mem, Columns: plainFastCols, BatchSize: 500, Workers: workers, Stats: st, Tuning: tune}, fmt.Sprintf("workers=%d", workers))
				streams += st.PageStreams.Load()
				if st.StreamedRowGroups.Load() == 0 {
					t.Errorf("workers=%d: no row group was streamed", workers)
				}
				pqtest.SameRows(t, want[0].Schema(), got, want)
				pqtest.ReleaseAll(got)
				mem.AssertSize(t, 0)
			}
			if tc.huge && streams == 0 {
				t.Error("no page was streamed")
			}
			// Every column: those the fast path does not take (strings,
			// dates, int16...) are read by pqarrow column readers, a
			// segment at a time.
			all, err, _ := readParquetWith(t, path, false, memory.NewGoAllocator(), nil, tune)
			if err != nil {
				t.Fatalf("pqarrow, every column: %v", err)
			}
			defer pqtest.ReleaseAll(all)
			var mem memory.Allocator = memory.NewGoAllocator()
			if !tc.pf.v2 { // pqarrow's column readers leak on v2 pages
				checked := memory.NewCheckedAllocator(mem)
				defer checked.AssertSize(t, 0)
				mem = checked
			}
			got, err, st := readParquetStats(t, path, true, mem, nil, tune)
			if err != nil {
				t.Fatalf("every column: %v", err)
			}
			defer pqtest.ReleaseAll(got)
			if st.StreamedRowGroups.Load() == 0 {
				t.Error("every column: no row group was streamed")
			}
			pqtest.SameRows(t, all[0].Schema(), got, all)
		})
	}
}

// TestParquetStreamedCorrupt garbles bytes of the chunks of a streamed row
// group: the read returns pqarrow's rows or fails with ErrFormat, never
// panics, hangs or leaks.
func TestParquetStreamedCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name string
		pf   plainFile
		huge bool
	}{
		{"small-pages", plainFile{rows: 4000, rgRows: 4000, codec: compress.Codecs.Snappy, v2: true, dictionary: true, dictLimit: 2048, smallPages: true}, false},
		{"snappy/v1/huge-pages", plainFile{rows: 4000, rgRows: 4000, codec: compress.Codecs.Snappy}, true},
		{"gzip/v2/huge-pages", plainFile{rows: 4000, rgRows: 4000, codec: compress.Codecs.Gzip, v2: true}, true},
		{"zstd/v1/huge-pages", plainFile{rows: 4000, rgRows: 4000, codec: compress.Codecs.Zstd}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tune := DefaultTuning()
			if tc.huge {
				tune.HugePageBytes = 0
			}
			streamedCorrupt(t, tc.pf, tune)
		})
	}
}

// streamedCorrupt garbles the bytes of pf's chunks one at a time and reads
// the file streamed (tune, with streamSmall's segments of 700 rows): the
// fast path's rows are pqarrow's, or the read fails with ErrFormat. It
// returns the pages the fast reads spilled.
func streamedCorrupt(t *testing.T, pf plainFile, tune *Tuning) (spilled int64) {
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.parquet")
	writePlainFile(t, clean, pf)
	orig, err := os.ReadFile(clean)
	if err != nil {
		t.Fatal(err)
	}
	cols := []string{"i32", "f64n", "i64low", "f32null"}
	streamSmall(tune, 700)
	path := filepath.Join(dir, "bad.parquet")
	var failed, read int
	step := int64(53)
	switch {
	case testing.Short():
		step = 211
	case exhaustive():
		step = 13
	}
	for _, rgn := range plainChunkRanges(t, clean, cols) {
		for o := int64(0); o < rgn[1]; o += step {
			data := append([]byte(nil), orig...)
			data[rgn[0]+o] ^= 0x5a
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			want, werr, _ := readParquetWith(t, path, false, memory.NewGoAllocator(), cols, tune)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			got, gerr, st := readParquetStats(t, path, true, mem, cols, tune)
			spilled += st.SpilledPages.Load()
			switch {
			case gerr != nil:
				if !errors.Is(gerr, ErrFormat) {
					t.Errorf("byte %d: %v, not ErrFormat", rgn[0]+o, gerr)
				}
				failed++
			case werr == nil:
				if !pqtest.SameRows(t, want[0].Schema(), got, want) {
					t.Errorf("byte %d: the streamed read differs from pqarrow's", rgn[0]+o)
				}
				read++
			default:
				read++ // pqarrow refuses what the fast path reads
			}
			pqtest.ReleaseAll(want)
			pqtest.ReleaseAll(got)
			if st.StreamFallbacks.Load() == 0 {
				// (pqarrow's record reader, which reads a row group
				// whose headers the stream does not take, leaks on
				// some corrupt pages.)
				mem.AssertSize(t, 0)
			}
		}
	}
	// A zstd frame carries a checksum of its content: every corruption
	// of a page's bytes may be rejected.
	if failed == 0 || read == 0 && pf.codec != compress.Codecs.Zstd {
		t.Errorf("%d corruptions read, %d rejected: want some of each", read, failed)
	}
	return spilled
}

// FuzzSnappyStream checks the incremental snappy decoder against the
// reference decoder: whatever it accepts, read in pieces of any size, is
// what the reference decodes.
func FuzzSnappyStream(f *testing.F) {
	noise := make([]byte, 5000) // incompressible: long literals
	for i := range noise {
		noise[i] = byte(i*i*2654435761>>13 + i)
	}
	for _, s := range []string{"", "a", "abcabcabcabcabcabc", strings.Repeat("0123456789", 20000), string(noise) + "abcabcabcabc" + string(noise[:700])} {
		f.Add(snappy.Encode(nil, []byte(s)), uint16(7))
	}
	f.Fuzz(func(t *testing.T, data []byte, piece uint16) {
		m, k := binary.Uvarint(data)
		if k <= 0 || m > 1<<20 {
			return
		}
		// Literals of 64 bytes on are read straight from src (past what
		// the buffer of 16 bytes holds).
		src := bytes.NewReader(data)
		dec := decompressor(compress.Codecs.Snappy, bufio.NewReaderSize(src, 16), src, int64(m), nil, 64)
		if dec == nil {
			t.Fatal("a snappy stream of a stated length was refused")
		}
		out := make([]byte, 0, m)
		buf := make([]byte, int(piece)%4096+1)
		var err error
		for {
			var n int
			n, err = dec.Read(buf)
			out = append(out, buf[:n]...)
			if err != nil || n == 0 && len(out) == int(m) {
				break
			}
		}
		want, werr := snappy.Decode(nil, data)
		if errors.Is(err, io.EOF) {
			if werr != nil || !bytes.Equal(out, want) {
				t.Fatalf("stream read %d bytes to its end; reference %d bytes, %v", len(out), len(want), werr)
			}
		}
	})
}

// TestParquetStreamedFewRowGroups checks that a file of fewer row groups
// than workers is streamed in segments (so that every worker decodes),
// and one of as many is not.
func TestParquetStreamedFewRowGroups(t *testing.T) {
	path := filepath.Join(t.TempDir(), "one.parquet")
	writePlainFile(t, path, plainFile{rows: 5000, rgRows: 5000, codec: compress.Codecs.Snappy})
	tune := DefaultTuning()
	tune.SegmentRows = 1000 // segments of 4096 rows, the least decode batch
	want := pqarrowRows(t, path)
	for _, tc := range []struct {
		workers  int
		streamed bool
	}{{1, false}, {2, true}, {3, true}} {
		st := new(Stats)
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		got := readAllOf(t, path, ReadOptions{Allocator: mem, Columns: plainFastCols, BatchSize: 400, Workers: tc.workers, Stats: st, Tuning: tune}, "read")
		pqtest.SameRows(t, want[0].Schema(), got, want)
		pqtest.ReleaseAll(got)
		mem.AssertSize(t, 0)
		if streamed := st.StreamedRowGroups.Load() > 0; streamed != tc.streamed {
			t.Errorf("workers=%d: streamed %v, want %v", tc.workers, streamed, tc.streamed)
		}
	}
}

// TestParquetStreamedSegmentsShareColumns checks that the worker of a
// later segment decodes the columns of an earlier segment of its row group
// whose worker has not got to them: with pages larger than a segment (one
// page a chunk, as DuckDB writes), the first segment's worker would
// otherwise decompress every page alone. The first segment's worker is
// held back until the second's has decoded all its columns; the rows are
// pqarrow's, and closing the reader meanwhile, without a Read, leaks
// nothing.
func TestParquetStreamedSegmentsShareColumns(t *testing.T) {
	dir := t.TempDir()
	for i, tc := range []struct {
		name  string
		pf    plainFile
		close bool // close without reading while segment 0 is held back
	}{
		{"zstd/v1", plainFile{rows: 12000, rgRows: 12000, codec: compress.Codecs.Zstd}, false},
		{"gzip/v2", plainFile{rows: 12000, rgRows: 12000, codec: compress.Codecs.Gzip, v2: true}, false},
		{"zstd/v1/closed-unread", plainFile{rows: 12000, rgRows: 12000, codec: compress.Codecs.Zstd}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noGoroutineLeak(t)
			path := filepath.Join(dir, "h"+strconv.Itoa(i)+".parquet")
			writePlainFile(t, path, tc.pf)
			want := pqarrowRows(t, path)
			tune := DefaultTuning()
			tune.SegmentRows = 4096 // 3 segments; one page a column spans them all
			st := new(Stats)
			helped := make(chan bool, 1)
			tune.OnSegment = func(rg, seg int) {
				if seg != 0 {
					return
				}
				deadline := time.Now().Add(10 * time.Second)
				for st.HelpedColumns.Load() < int64(len(plainFastCols)) && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
				helped <- st.HelpedColumns.Load() >= int64(len(plainFastCols))
			}
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			r, err := openFile(path, ReadOptions{Allocator: mem, Columns: plainFastCols, BatchSize: 1000, Workers: 2, Stats: st, Tuning: tune})
			if err != nil {
				t.Fatal(err)
			}
			if tc.close {
				if !<-helped {
					t.Error("segment 0's columns were not decoded by the other worker")
				}
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
				return
			}
			got, err := readRest(r)
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			defer pqtest.ReleaseAll(got)
			if !<-helped {
				t.Error("segment 0's columns were not decoded by the other worker")
			}
			pqtest.SameRows(t, want[0].Schema(), got, want)
		})
	}
}

// TestParquetStreamedDropsDictionary checks that a streamed column lets go
// of its dictionary, and of the decoded rows of a page it has handed out,
// once no page left in the chunk needs them: a writer falls back to PLAIN
// after a page or two (pyarrow's 1 MB dictionaries), and 64 columns
// keeping both for the rest of a 1M-row group took 128 MB.
func TestParquetStreamedDropsDictionary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dict.parquet")
	writePlainFile(t, path, plainFile{rows: 13000, rgRows: 13000, codec: compress.Codecs.Snappy, dictionary: true, dictLimit: 2048})
	tune := streamSmall(DefaultTuning(), 4096) // segments of 4096 rows
	want := pqarrowRows(t, path)
	// The hook runs in the only worker, before it decodes a task: at the
	// second one the first segment is decoded and nothing else runs.
	ready := make(chan *parallelParquet, 1)
	var calls int
	var held []string
	tune.OnDecode = func(int) {
		calls++
		if calls != 2 {
			return
		}
		p := <-ready
		s := p.tasks[1].s
		if s == nil {
			t.Error("the row group is not streamed")
			return
		}
		for k, cs := range s.cols {
			if cs == nil {
				continue
			}
			if cs.chunk.dict != nil || cs.leftAt == cs.leftN && cs.left != nil {
				held = append(held, p.sc.Field(k).Name)
			}
		}
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	r, err := openFile(path, ReadOptions{Allocator: mem, Columns: plainFastCols, BatchSize: 1000, Workers: 1, Tuning: tune})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := r.src.(*parallelParquet)
	if !ok {
		r.Close()
		t.Fatalf("source %T, want the parallel reader", r.src)
	}
	ready <- p
	got, err := readRest(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	pqtest.SameRows(t, want[0].Schema(), got, want)
	pqtest.ReleaseAll(got)
	mem.AssertSize(t, 0)
	if calls < 2 {
		t.Fatalf("%d tasks decoded, want several segments", calls)
	}
	if len(held) > 0 {
		t.Errorf("after the first segment, columns %v still hold a dictionary or rows handed out", held)
	}
}

// TestLeftPoolBounded checks that the pool of overhanging pages keeps at
// most maxLeftPool bytes however many pages are put back, and hands a
// kept page out again for a request of about its size only.
func TestLeftPoolBounded(t *testing.T) {
	const page = 1 << 20
	emptyLeftPool()
	defer emptyLeftPool() // for the other tests
	var got [][]byte
	for range 2 * maxLeftPool / page {
		got = append(got, getLeft(page))
	}
	for _, b := range got {
		putLeft(b)
	}
	leftPool.mu.Lock()
	held, kept := leftPool.held, len(leftPool.free)
	leftPool.mu.Unlock()
	if held > maxLeftPool || kept != maxLeftPool/page {
		t.Errorf("pool holds %d bytes in %d pages, want at most %d bytes", held, kept, maxLeftPool)
	}
	for _, tc := range []struct {
		n      int
		reused bool
	}{{page, true}, {page - 1000, true}, {page / 4, false}, {page + 1, false}} {
		before := len(leftPool.free)
		b := getLeft(tc.n)
		if len(b) != tc.n {
			t.Errorf("getLeft(%d) has length %d", tc.n, len(b))
		}
		if reused := len(leftPool.free) < before; reused != tc.reused {
			t.Errorf("getLeft(%d): reused %v, want %v", tc.n, reused, tc.reused)
		}
	}
}

func emptyLeftPool() {
	leftPool.mu.Lock()
	defer leftPool.mu.Unlock()
	clear(leftPool.free)
	leftPool.free, leftPool.held = leftPool.free[:0], 0
}

// lz4Pages are pages for the LZ4 stream's tests: long and short literal
// runs and matches, overlapping ones, matches reaching back far.
func lz4Pages() [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	noise := make([]byte, 300_000)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	mixed := append([]byte(nil), noise[:100_000]...)
	mixed = append(mixed, bytes.Repeat([]byte("a"), 5000)...)
	mixed = append(mixed, noise[:70_000]...) // a match 105,000 back: out of reach, literals
	mixed = append(mixed, noise[50_000:90_000]...)
	return [][]byte{
		[]byte("abcabcabcabcabcabc"),
		bytes.Repeat([]byte("0123456789"), 20000),
		noise,
		mixed,
	}
}

// TestLZ4Stream checks the incremental LZ4 decoder against pierrec's
// block decoder, read in pieces of several sizes, and that it refuses a
// truncated block and bytes after one.
func TestLZ4Stream(t *testing.T) {
	for i, page := range lz4Pages() {
		dst := make([]byte, lz4.CompressBlockBound(len(page)))
		var c lz4.Compressor
		n, err := c.CompressBlock(page, dst)
		if err != nil || n == 0 {
			t.Fatalf("page %d: compress: %d, %v", i, n, err)
		}
		block := dst[:n]
		for _, piece := range []int{1, 7, 4096, 1 << 20} {
			out, err := readLZ4Stream(block, len(page), piece)
			if err != nil || !bytes.Equal(out, page) {
				t.Errorf("page %d, pieces of %d: %d bytes, %v; want the page's %d", i, piece, len(out), err, len(page))
			}
		}
		for _, bad := range []struct {
			name  string
			block []byte
		}{
			{"truncated", block[:len(block)-1]},
			{"trailing byte", append(append([]byte(nil), block...), 0)},
		} {
			if _, err := readLZ4Stream(bad.block, len(page), 4096); !errors.Is(err, errLZ4Stream) {
				t.Errorf("page %d, %s: error %v, want errLZ4Stream", i, bad.name, err)
			}
		}
	}
}

// readLZ4Stream reads block, a stream of size bytes, in reads of piece.
func readLZ4Stream(block []byte, size, piece int) ([]byte, error) {
	dec := decompressor(codecLZ4Raw, bufio.NewReader(bytes.NewReader(block)), nil, int64(size), nil, DefaultTuning().DirectLiteral)
	if dec == nil {
		return nil, errors.New("no LZ4 stream decoder")
	}
	out := make([]byte, 0, size)
	buf := make([]byte, piece)
	for {
		n, err := dec.Read(buf)
		out = append(out, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if len(out) > size {
			return out, errors.New("more than the stated size")
		}
	}
}

// FuzzLZ4Stream checks the incremental LZ4 decoder against pierrec's: what
// it reads to its end, in pieces of any size, is what pierrec decodes.
func FuzzLZ4Stream(f *testing.F) {
	for _, page := range lz4Pages() {
		dst := make([]byte, lz4.CompressBlockBound(len(page)))
		var c lz4.Compressor
		if n, err := c.CompressBlock(page, dst); err == nil && n > 0 {
			f.Add(dst[:n], uint32(len(page)), uint16(7))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, size uint32, piece uint16) {
		if size > 1<<20 {
			return
		}
		out, err := readLZ4Stream(data, int(size), int(piece)%4096+1)
		if err != nil {
			return
		}
		want := make([]byte, size)
		n, werr := lz4.UncompressBlock(data, want)
		if werr != nil || n != int(size) || !bytes.Equal(out, want) {
			t.Fatalf("stream read %d bytes to its end; reference %d bytes, %v", len(out), n, werr)
		}
	})
}

// TestParquetStreamedLZ4Pages reads DuckDB's LZ4_RAW pages as streams (a
// DuckDB file of 1M-row groups has one 8 MB page a column: decoded whole,
// 830 MB for the row group) and checks every value.
func TestParquetStreamedLZ4Pages(t *testing.T) {
	tune := streamSmall(DefaultTuning(), 300)
	tune.HugePageBytes = 0 // every page is huge
	st := new(Stats)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	recs := readAllOf(t, filepath.Join("../../testdata", "writers", "duckdb_lz4_5000.parquet"),
		ReadOptions{Allocator: mem, BatchSize: 700, Columns: []string{"x0", "x1", "x2", "f", "k"}, Stats: st, Tuning: tune}, "duckdb_lz4_5000.parquet")
	checkDuckDBRows(t, recs, 5000)
	pqtest.ReleaseAll(recs)
	mem.AssertSize(t, 0)
	if st.StreamedRowGroups.Load() == 0 || st.PageStreams.Load() == 0 {
		t.Error("no LZ4 page was streamed")
	}
}
