package arrowfix

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	_ "unsafe" // go:linkname

	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/pierrec/lz4/v4"
)

// Arrow v15 reads no LZ4 Parquet pages: it has no codec for LZ4_RAW (what
// DuckDB and Polars write for "lz4") and leaves the older LZ4 out on
// purpose (its Hadoop framing). Its codec table is unexported and has no
// registration function, so the two decoders are added to it by name:
// every reader of the process (pqarrow's and pate's own page decoders)
// then reads those pages. Nothing else in the table is touched: gzip,
// zstd, brotli and snappy stay Arrow's codecs (pate's own page readers
// decode those through package pagecodec, not through the table).
// Reading only: writing LZ4 is not offered. TestArrowCodecTable fails if
// the table is not where and what this expects (apache/arrow-go exports
// RegisterCodec from v18 on, which would make this unnecessary).
//
//go:linkname parquetCodecs github.com/apache/arrow/go/v15/parquet/compress.codecs
var parquetCodecs map[compress.Compression]compress.Codec

// The Parquet format's codec numbers (parquet.thrift CompressionCodec).
const (
	codecLZ4    = compress.Compression(5)
	codecLZ4Raw = compress.Compression(7)
)

func init() {
	if parquetCodecs == nil {
		// Not Arrow's table (it is made at its package's start): LZ4
		// pages stay unreadable, as in Arrow, rather than the process
		// failing to start.
		return
	}
	if _, ok := parquetCodecs[codecLZ4Raw]; !ok {
		parquetCodecs[codecLZ4Raw] = lz4Codec{}
	}
	if _, ok := parquetCodecs[codecLZ4]; !ok {
		parquetCodecs[codecLZ4] = lz4Codec{hadoop: true}
	}
}

// lz4Codec decodes LZ4 blocks: LZ4_RAW pages are one bare block; LZ4
// pages are Hadoop-framed blocks (a big-endian uncompressed and compressed
// length before each) or, from some writers, one bare block, told apart
// as Arrow C++ does: the framing is tried first.
type lz4Codec struct{ hadoop bool }

var errLZ4 = errors.New("corrupt lz4 page")

// Decode decompresses src into dst, which the page reader sizes to the
// page's uncompressed length. Like Arrow's own codecs it panics on corrupt
// data (the readers recover it into an error wrapping ErrFormat).
func (c lz4Codec) Decode(dst, src []byte) []byte {
	if c.hadoop {
		if out, ok := decodeHadoopLZ4(dst, src); ok {
			return out
		}
	}
	n, err := lz4.UncompressBlock(src, dst)
	if err != nil {
		panic(fmt.Errorf("%w: %w", errLZ4, err))
	}
	return dst[:n]
}

// decodeHadoopLZ4 decodes Hadoop's framing: frames of (uncompressed
// length, compressed length, block), all of dst filled exactly.
func decodeHadoopLZ4(dst, src []byte) ([]byte, bool) {
	out := 0
	for len(src) > 0 {
		if len(src) < 8 {
			return nil, false
		}
		raw, comp := binary.BigEndian.Uint32(src), binary.BigEndian.Uint32(src[4:])
		src = src[8:]
		if uint64(comp) > uint64(len(src)) || uint64(raw) > uint64(len(dst)-out) {
			return nil, false
		}
		n, err := lz4.UncompressBlock(src[:comp], dst[out:out+int(raw)])
		if err != nil || n != int(raw) {
			return nil, false
		}
		out += n
		src = src[comp:]
	}
	return dst[:out], out == len(dst)
}

func (lz4Codec) NewReader(r io.Reader) io.ReadCloser {
	return io.NopCloser(&errReader{fmt.Errorf("%w: lz4 pages are decoded a page at a time", errLZ4)})
}

func (lz4Codec) NewWriter(w io.Writer) io.WriteCloser { return lz4Unwritable{} }

func (lz4Codec) NewWriterLevel(w io.Writer, _ int) (io.WriteCloser, error) {
	return nil, errors.New("arrowio: lz4 parquet pages are read, not written")
}

func (lz4Codec) Encode(dst, src []byte) []byte {
	panic("arrowio: lz4 parquet pages are read, not written")
}

func (c lz4Codec) EncodeLevel(dst, src []byte, _ int) []byte { return c.Encode(dst, src) }

func (lz4Codec) CompressBound(n int64) int64 { return int64(lz4.CompressBlockBound(int(n))) }

type errReader struct{ err error }

func (e *errReader) Read([]byte) (int, error) { return 0, e.err }

type lz4Unwritable struct{}

func (lz4Unwritable) Write([]byte) (int, error) {
	return 0, errors.New("arrowio: lz4 parquet pages are read, not written")
}
func (lz4Unwritable) Close() error { return nil }
