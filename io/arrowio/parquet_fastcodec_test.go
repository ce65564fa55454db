package arrowio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/klauspost/compress/zlib"

	"github.com/pate-tool/pate/io/arrowio/internal/fastcodec"
)

// withCodec puts c into Arrow's codec table for id while f runs.
func withCodec(id compress.Compression, c compress.Codec, f func()) {
	old := parquetCodecs[id]
	parquetCodecs[id] = c
	defer func() { parquetCodecs[id] = old }()
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

// TestParquetCCodecs reads gzip, zstd and brotli Parquet files through the
// fast path with the C decoders and with Arrow's Go codecs: the same
// values. Gzip pages made of several members read alike; gzip pages that
// are zlib streams (Arrow C++ reads them) are read with the C decoders,
// and refused as corrupt by Arrow's Go codec.
func TestParquetCCodecs(t *testing.T) {
	for _, id := range []compress.Compression{compress.Codecs.Gzip, compress.Codecs.Zstd, compress.Codecs.Brotli} {
		if _, ok := arrowCodecs[id]; !ok {
			t.Fatalf("%v is not wrapped", id)
		}
		if got := fmt.Sprintf("%T", parquetCodecs[id]); !strings.Contains(got, "fastcodec.") {
			t.Fatalf("%v: codec table holds %s, not the C decoders' codec", id, got)
		}
	}
	dir := t.TempDir()
	gz := arrowCodecs[compress.Codecs.Gzip]
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
			got, err, fast := readParquetWith(t, path, true, mem, nil)
			if err != nil {
				t.Fatalf("C decoders: %v", err)
			}
			defer releaseAll(got)
			if fast == 0 {
				t.Fatal("the fast path decoded no column")
			}
			var want []arrow.Record
			withCodec(tc.pf.codec, arrowCodecs[tc.pf.codec], func() {
				want, err, _ = readParquetWith(t, path, true, mem, nil)
			})
			if tc.goFails {
				if err == nil || !errors.Is(err, ErrFormat) {
					releaseAll(want)
					t.Fatalf("Arrow's Go codec read it: %v", err)
				}
				// The values are those of the same rows written as
				// ordinary gzip.
				ref := path + ".ref"
				writePlainFile(t, ref, tc.pf)
				want, err, _ = readParquetWith(t, ref, true, mem, nil)
			}
			if err != nil {
				t.Fatalf("Go codecs: %v", err)
			}
			defer releaseAll(want)
			if len(got) == 0 {
				t.Fatal("no rows")
			}
			sameRows(t, plainSchema, got, want)
		})
	}
}

// TestPageStreamC: huge zstd and gzip pages are streamed through the C
// decoders when there are any, and read back whole.
func TestPageStreamC(t *testing.T) {
	page := bytes.Repeat([]byte("pate streams zstd and gzip pages "), 4096)
	for _, id := range []compress.Compression{compress.Codecs.Zstd, compress.Codecs.Gzip} {
		src := arrowCodecs[id].Encode(nil, page)
		var ps pageStream
		if !ps.open(id, bytes.NewReader(src), int64(len(page))) {
			t.Fatalf("%v: the page did not open as a stream", id)
		}
		c := ps.cz != nil || ps.cg != nil
		if c != fastcodec.Available {
			t.Errorf("%v: C stream %v, C decoders available %v", id, c, fastcodec.Available)
		}
		got, err := io.ReadAll(ps.dec)
		if err != nil || !bytes.Equal(got, page) {
			t.Errorf("%v: read %d bytes of %d: %v", id, len(got), len(page), err)
		}
		ps.close()
	}
}
