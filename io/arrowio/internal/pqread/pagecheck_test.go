package pqread

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/compress"

	"github.com/pate-tool/pate/io/arrowio/internal/pqread/pqtest"
)

// TestHostilePageHeader reads the 473-byte file FuzzReadParquet found, whose
// first page header sent Arrow's Thrift decoder into a loop that allocated
// gigabytes and never returned. The page-header check must refuse it, as a
// format error naming the row group and column, at once.
func TestHostilePageHeader(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/fuzz/FuzzReadParquet/hostile_page_header_thrift")
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	q := s[strings.Index(s, "[]byte(")+len("[]byte(") : strings.LastIndex(s, ")")]
	data, err := strconv.Unquote(q)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "hostile.parquet")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		r, err := openFile(path, ReadOptions{})
		if err != nil {
			done <- err
			return
		}
		defer r.Close()
		for {
			rec, err := r.Read()
			if err != nil {
				done <- err
				return
			}
			rec.Release()
		}
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "row group 0") || !strings.Contains(err.Error(), "page header") {
			t.Fatalf("got %v, want a format error naming the row group and the page header", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("reading the hostile file did not return")
	}
}

// hostileDictionary returns the bytes of a dictionary-encoded file whose
// column c's dictionary page header declares 2^31-1 values: the page
// header is rewritten in place, its page made shorter by what the header
// grew, so that every offset in the footer still holds.
func hostileDictionary(t testing.TB, c string, rows int) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "d.parquet")
	writePlainFile(t, path, plainFile{rows: rows, rgRows: rows, codec: compress.Codecs.Uncompressed, dictionary: true})
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rgn := plainChunkRanges(t, path, []string{c})[0]
	var h pageHeader
	n, ok := h.parse(data[rgn[0]:])
	if !ok || h.typ != pageDictionary {
		t.Fatalf("column %s does not start with a dictionary page", c)
	}
	page := n + int(h.csize)
	for k := 0; k < 16; k++ {
		size := int32(page - n - k)
		hdr := dictHeaderBytes(size, math.MaxInt32)
		if len(hdr) == n+k {
			copy(data[rgn[0]:], hdr)
			return data
		}
	}
	t.Fatal("no header length fits")
	return nil
}

// dictHeaderBytes encodes (Thrift compact) the PageHeader of an
// uncompressed dictionary page of size bytes and num PLAIN values.
func dictHeaderBytes(size, num int32) []byte {
	zz := func(b []byte, v int32) []byte {
		return binary.AppendUvarint(b, uint64(uint32(v<<1)^uint32(v>>31)))
	}
	b := zz([]byte{0x15}, pageDictionary)  // 1: type
	b = zz(append(b, 0x15), size)          // 2: uncompressed_page_size
	b = zz(append(b, 0x15), size)          // 3: compressed_page_size
	b = zz(append(b, 0x4c, 0x15), num)     // 7: dictionary_page_header {1: num_values
	b = zz(append(b, 0x15), encodingPlain) // 2: encoding
	return append(b, 0x12, 0x00, 0x00)     // 3: is_sorted false} stop
}

// TestHostileDictionaryHeader reads files whose dictionary page header
// declares 2^31-1 values for a page of a few hundred bytes (the fuzz
// corpus has one: hostile_dictionary_header, hostileDictionary(t, "s", 20)). Arrow's
// reader sizes its dictionary by that count before it reads a value
// (2^31 × 24 bytes for a string column: the process dies out of memory),
// so the page-header check must refuse the file, as a format error
// naming the column and the dictionary, with little memory allocated.
func TestHostileDictionaryHeader(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []string{"s", "f64", "i32n"} {
		t.Run(c, func(t *testing.T) {
			path := filepath.Join(dir, c+".parquet")
			if err := os.WriteFile(path, hostileDictionary(t, c, 300), 0o644); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			recs, err, _ := readParquetWith(t, path, true, mem, nil)
			pqtest.ReleaseAll(recs)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), strconv.Quote(c)) || !strings.Contains(err.Error(), "dictionary of 2147483647 values") {
				t.Fatalf("got %v, want a format error naming column %q and its dictionary", err, c)
			}
			if d := after.TotalAlloc - before.TotalAlloc; d > 64<<20 {
				t.Errorf("reading allocated %d MB", d>>20)
			}
		})
	}
}

// TestStoredPageSize: in an uncompressed chunk, a page header whose
// uncompressed size differs from its stored size makes Arrow cut the page
// or pad it with stale bytes (values that depend on the pages read
// before, found by TestParquetPlainCorrupt); the header check refuses it,
// with the fast path on or off, whichever the page's kind.
func TestStoredPageSize(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		pf   plainFile
		page int // which page of the chunk
	}{
		{"v1/data", plainFile{rows: 300, rgRows: 300, codec: compress.Codecs.Uncompressed}, 0},
		{"v2/data", plainFile{rows: 300, rgRows: 300, codec: compress.Codecs.Uncompressed, v2: true}, 0},
		{"v1/dictionary", plainFile{rows: 300, rgRows: 300, codec: compress.Codecs.Uncompressed, dictionary: true}, 0},
		{"v1/indices", plainFile{rows: 300, rgRows: 300, codec: compress.Codecs.Uncompressed, dictionary: true}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "p.parquet")
			writePlainFile(t, path, tc.pf)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// Field 2 (uncompressed_page_size) follows field 1 (type, a
			// byte): lower its first varint byte by two, one less size.
			rgn := plainChunkRanges(t, path, []string{"f64"})[0]
			pos := rgn[0]
			for range tc.page {
				var h pageHeader
				n, ok := h.parse(data[pos:])
				if !ok {
					t.Fatal("page header does not parse")
				}
				pos += int64(n) + int64(h.csize)
			}
			if data[pos+2] != 0x15 || data[pos+3]&0x7e == 0 {
				t.Fatalf("unexpected header % x", data[pos:pos+8])
			}
			data[pos+3] -= 2
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, fast := range []bool{false, true} {
				recs, err, _ := readParquetWith(t, path, fast, memory.NewGoAllocator(), []string{"f64"})
				pqtest.ReleaseAll(recs)
				if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), `column "f64"`) || !strings.Contains(err.Error(), "said to hold") {
					t.Errorf("fast path %v: got %v, want a format error naming the column and the page size", fast, err)
				}
			}
		})
	}
}

// TestStatedDecodedSize: a snappy page whose block states more bytes than
// the page's uncompressed size (Arrow's snappy codec allocates what is
// stated, up to 4 GB) is refused as corrupt before Arrow decodes it, and
// pate's own decoders refuse it too.
func TestStatedDecodedSize(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		pf   plainFile
	}{
		{"snappy/v1", plainFile{rows: 300, rgRows: 300, codec: compress.Codecs.Snappy}},
		{"snappy/v2", plainFile{rows: 300, rgRows: 300, codec: compress.Codecs.Snappy, v2: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "p.parquet")
			writePlainFile(t, path, tc.pf)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			pos := plainChunkRanges(t, path, []string{"f64"})[0][0]
			var h pageHeader
			n, ok := h.parse(data[pos:])
			if !ok || h.usize != 2400 || h.defLen != 0 || h.repLen != 0 {
				t.Fatalf("unexpected page header %+v", h)
			}
			body := pos + int64(n)
			// 2400 is a two-byte varint: state 16383 instead.
			if m, k := binary.Uvarint(data[body:]); m != 2400 || k != 2 {
				t.Fatalf("block states %d in %d bytes", m, k)
			}
			data[body], data[body+1] = 0xff, 0x7f
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, fast := range []bool{false, true} {
				recs, err, _ := readParquetWith(t, path, fast, memory.NewGoAllocator(), []string{"f64"})
				pqtest.ReleaseAll(recs)
				if !errors.Is(err, ErrFormat) {
					t.Errorf("fast path %v: got %v, want a format error", fast, err)
				}
				if !fast && (err == nil || !strings.Contains(err.Error(), "said to decode to 16383")) {
					t.Errorf("pqarrow: got %v, want the stated size refused", err)
				}
			}
		})
	}
	// A zstd frame stating 34 GB in a page of 95 bytes, as a fuzzed
	// file's did, and one stating the page's size.
	frame := func(stated uint64) []byte {
		b := binary.LittleEndian.AppendUint32(nil, 0xFD2FB528)
		b = append(b, 0xe0) // single segment, an 8-byte content size
		b = binary.LittleEndian.AppendUint64(b, stated)
		return append(b, 0x01, 0x00, 0x00, 'x')
	}
	for _, tc := range []struct {
		stated uint64
		ok     bool
	}{{34766585856, false}, {95, true}, {94, true}} {
		src := frame(tc.stated)
		hc := headerChecker{r: bytes.NewReader(src), size: int64(len(src))}
		h := pageHeader{v1: true, csize: int32(len(src)), usize: 95}
		if err := hc.checkStatedSize(&h, compress.Codecs.Zstd, 0, int64(len(src))); (err == nil) != tc.ok {
			t.Errorf("zstd frame stating %d in a page of 95: %v", tc.stated, err)
		}
	}
}

// TestNestedValuesBounded: Arrow's reader sizes a list row by its level
// entries, so a page declaring more values than its chunk has left (a
// fuzzed file declared one row of 2^31 and the process asked for 34 GB)
// is refused as corrupt, and a nested chunk of more than Tuning.MaxNestedValues
// entries is refused, naming the column, before Arrow decodes it; pate's
// own list path still reads such a chunk.
func TestNestedValuesBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "n.parquet")
	pqtest.WriteSpanningNullList(t, path, 300, compress.Codecs.Uncompressed)
	t.Run("chunk bound", func(t *testing.T) {
		tune := DefaultTuning()
		tune.MaxNestedValues = 100
		recs, err, _ := readParquetWith(t, path, false, memory.NewGoAllocator(), []string{"n32"}, tune)
		pqtest.ReleaseAll(recs)
		if !errors.Is(err, errNestedTooLarge) || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), `column "n32"`) {
			t.Errorf("Arrow's path: got %v, want the nested bound naming the column", err)
		}
		recs, err, n := readParquetWith(t, path, true, memory.NewGoAllocator(), []string{"n32"}, tune)
		pqtest.ReleaseAll(recs)
		if err != nil || n == 0 {
			t.Errorf("the list path: %v, %d chunks", err, n)
		}
	})
	t.Run("page past its chunk", func(t *testing.T) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rgn := plainChunkRanges(t, path, []string{"n32.list.element"})[0]
		// The last data page's num_values, the first field of its
		// data_page_header (field 5, a struct), made 63: one byte.
		var last int64 = -1
		var lastH pageHeader
		for pos := rgn[0]; pos < rgn[0]+rgn[1]; {
			var h pageHeader
			n, ok := h.parse(data[pos:])
			if !ok {
				t.Fatal("page header does not parse")
			}
			last, lastH = pos, h
			pos += int64(n) + int64(h.csize)
		}
		hdr := data[last:]
		at := bytes.Index(hdr[:32], []byte{0x2c, 0x15}) // field 5 struct, field 1 i32
		if at < 0 || lastH.numValues >= 63 || hdr[at+2] != byte(lastH.numValues<<1) {
			t.Fatalf("unexpected header % x (%d values)", hdr[:16], lastH.numValues)
		}
		hdr[at+2] = 63 << 1
		bad := filepath.Join(t.TempDir(), "bad.parquet")
		if err := os.WriteFile(bad, data, 0o644); err != nil {
			t.Fatal(err)
		}
		recs, err, _ := readParquetWith(t, bad, false, memory.NewGoAllocator(), []string{"n32"})
		pqtest.ReleaseAll(recs)
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "its chunk has") {
			t.Errorf("got %v, want the page refused", err)
		}
	})
}

// countingReaderAt counts the reads made of an io.ReaderAt.
type countingReaderAt struct {
	r     *bytes.Reader
	reads int
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	return c.r.ReadAt(p, off)
}

// TestSmallPagesShareReads walks the pages of files of small pages (512
// bytes, pqarrow's smallest useful setting) as the streamed path does:
// every header must parse as it does when read on its own, every page's
// bytes must be the file's, and both must take fewer reads than pages:
// headers share the 1 KB a header read brings in (two 512-byte pages a
// read), page bodies a 256 KB window.
func TestSmallPagesShareReads(t *testing.T) {
	for _, pf := range []plainFile{
		{rows: 20000, rgRows: 7000, codec: compress.Codecs.Snappy, smallPages: true},
		{rows: 20000, rgRows: 20000, codec: compress.Codecs.Uncompressed, smallPages: true, v2: true},
		{rows: 9000, rgRows: 9000, codec: compress.Codecs.Zstd, smallPages: true, dictionary: true},
	} {
		path := filepath.Join(t.TempDir(), "small.parquet")
		writePlainFile(t, path, pf)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		md := arrowFooter(t, path)
		hr := &countingReaderAt{r: bytes.NewReader(raw)}
		pr2 := &countingReaderAt{r: bytes.NewReader(raw)}
		hc := headerChecker{r: hr, size: int64(len(raw))}
		pd := plainDecoder{tune: DefaultTuning(), r: pr2, size: int64(len(raw))}
		pages := 0
		for rg := range len(md.RowGroups) {
			for leaf := range md.Schema.NumColumns() {
				cc, err := md.RowGroup(rg).ColumnChunk(leaf)
				if err != nil {
					t.Fatal(err)
				}
				start := chunkStart(cc)
				end := start + cc.TotalCompressedSize()
				for pos := start; pos < end; pages++ {
					h, hl, err := hc.header(pos, end)
					if err != nil {
						t.Fatalf("%+v: row group %d leaf %d byte %d: %v", pf, rg, leaf, pos, err)
					}
					alone := headerChecker{r: bytes.NewReader(raw), size: int64(len(raw))}
					want, wl, err := alone.header(pos, end)
					if err != nil || wl != hl || *want != *h {
						t.Fatalf("%+v: byte %d: header %+v (%d bytes), read alone %+v (%d bytes, %v)", pf, pos, *h, hl, want, wl, err)
					}
					size := hl + int(h.csize)
					b, ok := pd.readPage(pos, size)
					if !ok || !bytes.Equal(b, raw[pos:pos+int64(size)]) {
						t.Fatalf("%+v: byte %d: readPage gave other bytes than the file's (ok %v)", pf, pos, ok)
					}
					pos += int64(size)
				}
			}
		}
		if pages < 200 || hr.reads > pages*3/4 || pr2.reads > pages/100 {
			t.Errorf("%+v: %d pages took %d header reads and %d page reads; want many pages, few reads", pf, pages, hr.reads, pr2.reads)
		}
	}
}
