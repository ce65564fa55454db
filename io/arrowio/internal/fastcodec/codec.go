package fastcodec

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/klauspost/compress/zlib"
)

// Wrap returns a codec that decodes id's blocks with the C decoder where
// it can and is orig (Arrow's codec for id) otherwise: for every other
// method, and for every Decode the C decoder does not finish cleanly, so
// that errors and odd input behave as they did. Codecs without a C
// decoder are returned as they are.
//
// Decode keeps Arrow's contract: the decoded block is returned in dst if
// it fits (the Parquet readers size dst to the page's stated length), and
// corrupt input panics, from orig.
func Wrap(id compress.Compression, orig compress.Codec) compress.Codec {
	if orig == nil {
		return orig
	}
	switch id {
	case compress.Codecs.Gzip:
		return gzipCodec{orig}
	case compress.Codecs.Zstd:
		return zstdCodec{orig}
	case compress.Codecs.Brotli:
		return brotliCodec{orig}
	}
	return orig
}

// gzipCodec: Arrow's Go codec fills dst with gzip members (and panics if
// they are fewer bytes); Parquet writers in C++ may also write a zlib
// stream, which Arrow C++ reads (it lets zlib detect the header), so this
// codec reads one too, filling dst as for gzip.
type gzipCodec struct{ compress.Codec }

func (c gzipCodec) Decode(dst, src []byte) []byte {
	if len(dst) > 0 {
		if isZlib(src) {
			if Zlib(dst, src) {
				return dst
			}
			return decodeZlib(dst, src)
		}
		if Gzip(dst, src) {
			return dst
		}
	}
	return c.Codec.Decode(dst, src)
}

// isZlib reports whether b begins with a zlib header (RFC 1950: deflate
// with a window of at most 32 KiB, header check bits right) and so is not
// gzip, whose first byte 0x1f has a method nibble of 15.
func isZlib(b []byte) bool {
	if len(b) < 2 {
		return false
	}
	cmf, flg := b[0], b[1]
	return cmf&0x0f == 8 && cmf>>4 <= 7 && (uint16(cmf)<<8|uint16(flg))%31 == 0
}

// decodeZlib fills dst from the zlib stream src with the Go decoder and
// panics, as Arrow's codecs do, if it cannot, or if the stream is longer
// or fails its checksum (read at the stream's end).
func decodeZlib(dst, src []byte) []byte {
	r, err := zlib.NewReader(bytes.NewReader(src))
	if err != nil {
		panic(err)
	}
	if _, err := io.ReadFull(r, dst); err != nil {
		panic(err)
	}
	rest, err := io.ReadAll(io.LimitReader(r, 1))
	if err != nil {
		panic(fmt.Errorf("zlib page: %w", err))
	}
	if len(rest) > 0 {
		panic(errors.New("zlib page longer than its stated length"))
	}
	return dst
}

// zstdCodec: Arrow's Go codec decodes every frame, appending to dst[:0]
// (in place while they fit in cap(dst)).
type zstdCodec struct{ compress.Codec }

func (c zstdCodec) Decode(dst, src []byte) []byte {
	if cap(dst) > 0 {
		if n, ok := Zstd(dst[:cap(dst)], src); ok {
			return dst[:n]
		}
	}
	return c.Codec.Decode(dst, src)
}

// brotliCodec: Arrow's Go codec fills at most len(dst) bytes and returns
// what it got.
type brotliCodec struct{ compress.Codec }

func (c brotliCodec) Decode(dst, src []byte) []byte {
	if len(dst) > 0 {
		if n, ok := Brotli(dst, src); ok {
			return dst[:n]
		}
	}
	return c.Codec.Decode(dst, src)
}
