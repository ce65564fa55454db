package pqread

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	_ "unsafe" // go:linkname

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/klauspost/compress/zlib"

	"github.com/pate-tool/pate/io/arrowio/internal/pqread/pqtest"
)

// arrowCodecs is Arrow's codec table (see internal/arrowfix's lz4.go).
//
//go:linkname arrowCodecs github.com/apache/arrow/go/v15/parquet/compress.codecs
var arrowCodecs map[compress.Compression]compress.Codec

// withCodec puts c into Arrow's codec table for id while f runs (to
// write pages as other writers do).
func withCodec(id compress.Compression, c compress.Codec, f func()) {
	old := arrowCodecs[id]
	arrowCodecs[id] = c
	defer func() { arrowCodecs[id] = old }()
	f()
}

// zlibPages writes gzip pages as zlib streams, as some C++ writers'
// GZIP pages are.
type zlibPages struct{ compress.Codec }

func (zlibPages) Encode(dst, src []byte) []byte {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write(src)
	w.Close()
	return b.Bytes()
}

func (z zlibPages) EncodeLevel(dst, src []byte, _ int) []byte { return z.Encode(dst, src) }

// twoMembers writes each gzip page as two gzip members.
type twoMembers struct{ compress.Codec }

func (t twoMembers) Encode(dst, src []byte) []byte {
	h := len(src) / 2
	return append(t.Codec.Encode(nil, src[:h]), t.Codec.Encode(nil, src[h:])...)
}

func (t twoMembers) EncodeLevel(dst, src []byte, _ int) []byte { return t.Encode(dst, src) }

// TestParquetPageCodecs reads gzip, zstd and brotli Parquet files through
// the fast path (package pagecodec's decoders) and through pqarrow alone
// (Arrow's codecs): the same values. Gzip pages made of several members
// read alike; gzip pages that are zlib streams (Arrow C++ reads them) are
// read by the fast path, and refused as corrupt by Arrow's Go codec.
func TestParquetPageCodecs(t *testing.T) {
	dir := t.TempDir()
	gz, err := compress.GetCodec(compress.Codecs.Gzip)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		pf        plainFile
		writeWith compress.Codec // a gzip codec to write with, if not the table's
		goFails   bool           // Arrow's Go codec cannot read it
	}{
		{"gzip/v1", plainFile{rows: 5000, rgRows: 2500, codec: compress.Codecs.Gzip}, nil, false},
		{"gzip/v2", plainFile{rows: 5000, rgRows: 5000, codec: compress.Codecs.Gzip, v2: true, dictionary: true}, nil, false},
		{"gzip/two members", plainFile{rows: 4000, rgRows: 4000, codec: compress.Codecs.Gzip}, twoMembers{gz}, false},
		{"gzip/zlib pages", plainFile{rows: 4000, rgRows: 2000, codec: compress.Codecs.Gzip}, zlibPages{gz}, true},
		{"zstd/v1", plainFile{rows: 5000, rgRows: 2500, codec: compress.Codecs.Zstd}, nil, false},
		{"zstd/v2 small pages", plainFile{rows: 3000, rgRows: 3000, codec: compress.Codecs.Zstd, v2: true, smallPages: true}, nil, false},
		{"brotli/v1", plainFile{rows: 4000, rgRows: 4000, codec: compress.Codecs.Brotli}, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(tc.name)+".parquet")
			if tc.writeWith != nil {
				withCodec(compress.Codecs.Gzip, tc.writeWith, func() { writePlainFile(t, path, tc.pf) })
			} else {
				writePlainFile(t, path, tc.pf)
			}
			// pqarrow's fallback readers leak on data page v2 files
			// (see TestParquetPlainFastPath): the leak check is for v1.
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			if !tc.pf.v2 {
				defer mem.AssertSize(t, 0)
			}
			// A zlib file is read by the fast path only: its own columns
			// read, the others go to pqarrow, whose codec (Arrow's) refuses
			// them, as Arrow Go does.
			var cols []string
			schema := pqtest.PlainSchema
			if tc.goFails {
				cols = plainFastCols
				schema = projected(t, pqtest.PlainSchema, cols)
				all, err, _ := readParquetWith(t, path, true, mem, nil)
				if err == nil || !errors.Is(err, ErrFormat) {
					pqtest.ReleaseAll(all)
					t.Fatalf("pqarrow's columns of a zlib file read: %v", err)
				}
			}
			got, err, fast := readParquetWith(t, path, true, mem, cols)
			if err != nil {
				t.Fatalf("fast path: %v", err)
			}
			defer pqtest.ReleaseAll(got)
			if fast == 0 {
				t.Fatal("the fast path decoded no column")
			}
			want, err, slow := readParquetWith(t, path, false, mem, cols)
			if slow != 0 {
				pqtest.ReleaseAll(want)
				t.Fatalf("the fast path decoded %d columns with it off", slow)
			}
			if tc.goFails {
				if err == nil || !errors.Is(err, ErrFormat) {
					pqtest.ReleaseAll(want)
					t.Fatalf("Arrow's Go codec read it: %v", err)
				}
				// The values are those of the same rows written as
				// ordinary gzip.
				ref := path + ".ref"
				writePlainFile(t, ref, tc.pf)
				want, err, _ = readParquetWith(t, ref, false, mem, cols)
			}
			if err != nil {
				t.Fatalf("Arrow's codecs: %v", err)
			}
			defer pqtest.ReleaseAll(want)
			if len(got) == 0 {
				t.Fatal("no rows")
			}
			pqtest.SameRows(t, schema, got, want)
		})
	}
}

// projected is s with only the fields named in cols, in s's order.
func projected(t testing.TB, s *arrow.Schema, cols []string) *arrow.Schema {
	var fs []arrow.Field
	for _, f := range s.Fields() {
		if slices.Contains(cols, f.Name) {
			fs = append(fs, f)
		}
	}
	if len(fs) != len(cols) {
		t.Fatalf("columns %v not all in the schema", cols)
	}
	return arrow.NewSchema(fs, nil)
}

// TestPageStreamCodecs: huge zstd and gzip pages are streamed through
// pagecodec's pooled decoders, and read back whole, twice (the second
// time with the decoders the first one gave back).
func TestPageStreamCodecs(t *testing.T) {
	page := bytes.Repeat([]byte("pate streams zstd and gzip pages "), 4096)
	for _, id := range []compress.Compression{compress.Codecs.Zstd, compress.Codecs.Gzip, compress.Codecs.Zstd, compress.Codecs.Gzip} {
		c, err := compress.GetCodec(id)
		if err != nil {
			t.Fatal(err)
		}
		src := c.Encode(nil, page)
		var ps pageStream
		if !ps.open(&plainDecoder{tune: DefaultTuning()}, id, bytes.NewReader(src), int64(len(page))) {
			t.Fatalf("%v: the page did not open as a stream", id)
		}
		if (ps.cz != nil) != (id == compress.Codecs.Zstd) || (ps.cg != nil) != (id == compress.Codecs.Gzip) {
			t.Errorf("%v: not streamed by its pooled decoder", id)
		}
		got, err := io.ReadAll(ps.dec)
		if err != nil || !bytes.Equal(got, page) {
			t.Errorf("%v: read %d bytes of %d: %v", id, len(got), len(page), err)
		}
		ps.close()
	}
}
