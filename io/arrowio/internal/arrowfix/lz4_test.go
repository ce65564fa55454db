package arrowfix

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"

	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/pierrec/lz4/v4"
)

// TestArrowCodecTable checks the table the LZ4 codecs are added to by
// go:linkname: it is Arrow's (compress.GetCodec returns what it holds),
// it holds Arrow's own codecs for the five codecs Arrow implements, the
// two LZ4 decoders, and nothing else. A new Arrow version that renames,
// retypes or fills the table differently fails here, not in a user's run.
func TestArrowCodecTable(t *testing.T) {
	if parquetCodecs == nil {
		t.Fatal("the linked codec table is nil: not Arrow's (renamed or removed?)")
	}
	const arrowPkg = "github.com/apache/arrow/go/v15/parquet/compress"
	want := map[compress.Compression]string{
		compress.Codecs.Uncompressed: arrowPkg + ".nocodec",
		compress.Codecs.Snappy:       arrowPkg + ".snappyCodec",
		compress.Codecs.Gzip:         arrowPkg + ".gzipCodec",
		compress.Codecs.Brotli:       arrowPkg + ".brotliCodec",
		compress.Codecs.Zstd:         arrowPkg + ".zstdCodec",
		codecLZ4:                     "github.com/pate-tool/pate/io/arrowio/internal/arrowfix.lz4Codec",
		codecLZ4Raw:                  "github.com/pate-tool/pate/io/arrowio/internal/arrowfix.lz4Codec",
	}
	if len(parquetCodecs) != len(want) {
		t.Errorf("the table holds %d codecs, want %d", len(parquetCodecs), len(want))
	}
	for id, c := range parquetCodecs {
		typ := reflect.TypeOf(c)
		got := typ.PkgPath() + "." + typ.Name()
		if want[id] != got {
			t.Errorf("codec %v: the table holds %s, want %q", id, got, want[id])
		}
		if g, err := compress.GetCodec(id); err != nil || g != c {
			t.Errorf("codec %v: compress.GetCodec gives %T (%v), the table %T", id, g, err, c)
		}
	}
	if c := parquetCodecs[codecLZ4Raw]; c != (lz4Codec{}) {
		t.Errorf("LZ4_RAW: %#v, want the bare-block decoder", c)
	}
	if c := parquetCodecs[codecLZ4]; c != (lz4Codec{hadoop: true}) {
		t.Errorf("LZ4: %#v, want the Hadoop-framed decoder", c)
	}
}

// lz4Block compresses b into one bare LZ4 block.
func lz4Block(t testing.TB, b []byte) []byte {
	dst := make([]byte, lz4.CompressBlockBound(len(b)))
	var c lz4.Compressor
	n, err := c.CompressBlock(b, dst)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 { // incompressible: LZ4 has no stored block; a literal run
		t.Skip("incompressible input")
	}
	return dst[:n]
}

// hadoopFrame frames blocks as Hadoop's Lz4Codec does.
func hadoopFrame(t testing.TB, parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		blk := lz4Block(t, p)
		out = binary.BigEndian.AppendUint32(out, uint32(len(p)))
		out = binary.BigEndian.AppendUint32(out, uint32(len(blk)))
		out = append(out, blk...)
	}
	return out
}

// decodeLZ4 is Decode with its panic as an error.
func decodeLZ4(c lz4Codec, size int, src []byte) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			e, ok := p.(error)
			if !ok || !errors.Is(e, errLZ4) {
				panic(p)
			}
			err = e
		}
	}()
	return c.Decode(make([]byte, size), src), nil
}

// TestLZ4Codec decodes the two LZ4 Parquet codecs: LZ4_RAW (a bare
// block) and LZ4 (Hadoop-framed blocks, or a bare block as some writers
// leave it), and refuses corrupt pages with an error.
func TestLZ4Codec(t *testing.T) {
	page := bytes.Repeat([]byte("pate lz4 page "), 40)
	half := len(page) / 2
	tests := []struct {
		name    string
		codec   lz4Codec
		src     []byte
		size    int
		wantErr bool
	}{
		{"raw", lz4Codec{}, lz4Block(t, page), len(page), false},
		{"hadoop, one frame", lz4Codec{hadoop: true}, hadoopFrame(t, page), len(page), false},
		{"hadoop, two frames", lz4Codec{hadoop: true}, hadoopFrame(t, page[:half], page[half:]), len(page), false},
		{"lz4 as a bare block", lz4Codec{hadoop: true}, lz4Block(t, page), len(page), false},
		{"raw, truncated", lz4Codec{}, lz4Block(t, page)[:10], len(page), true},
		{"raw, page too small", lz4Codec{}, lz4Block(t, page), len(page) - 1, true},
		{"hadoop, frame longer than the page", lz4Codec{hadoop: true}, hadoopFrame(t, append(page, 'x')), len(page), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := decodeLZ4(tc.codec, tc.size, tc.src)
			if tc.wantErr {
				if err == nil && bytes.Equal(out, page) {
					t.Fatal("corrupt page decoded")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, page) {
				t.Fatalf("decoded %d bytes, not the page", len(out))
			}
		})
	}
}

// FuzzLZ4Decode feeds arbitrary pages to both LZ4 codecs: an error or at
// most the page's length, never another panic; a block made from the data
// decodes back to it.
func FuzzLZ4Decode(f *testing.F) {
	f.Add([]byte("a page a page a page a page"), 27, false)
	f.Add([]byte{0, 0, 0, 4, 0, 0, 0, 5, 0x40, 'a', 'b', 'c', 'd'}, 4, true)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, 1<<10, false)
	f.Fuzz(func(t *testing.T, data []byte, size int, hadoop bool) {
		if size < 0 || size > 1<<20 {
			return
		}
		c := lz4Codec{hadoop: hadoop}
		if out, err := decodeLZ4(c, size, data); err == nil && len(out) > size {
			t.Fatalf("decoded %d bytes into a page of %d", len(out), size)
		}
		blk := make([]byte, lz4.CompressBlockBound(len(data)))
		var comp lz4.Compressor
		n, err := comp.CompressBlock(data, blk)
		if err != nil || n == 0 {
			return
		}
		out, err := decodeLZ4(c, len(data), blk[:n])
		if err != nil || !bytes.Equal(out, data) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
