package fastcodec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
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
	case compress.Codecs.Snappy:
		return snappyCodec{orig}
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
// (in place while they fit in cap(dst)). It sizes its output by a frame's
// stated content size before decoding a byte: a page of 95 bytes whose
// frame stated 34 GB made FuzzReadParquetStreamed's worker die out of
// memory. A frame stated larger than the page (len(dst): the Parquet
// readers size dst to the page's stated length) is corrupt, and panics as
// Arrow's codecs do on corrupt input.
type zstdCodec struct{ compress.Codec }

func (c zstdCodec) Decode(dst, src []byte) []byte {
	if cap(dst) > 0 {
		if n, ok := Zstd(dst[:cap(dst)], src); ok {
			return dst[:n]
		}
	}
	if m, ok := ZstdContentSize(src); ok && m > uint64(len(dst)) {
		panic(fmt.Errorf("zstd frame of %d bytes in a page of %d", m, len(dst)))
	}
	return decodeZstd(dst, src)
}

// maxZstdWindow bounds the window of a zstd frame the Go decoder takes
// (Parquet writers use a few MB at most).
const maxZstdWindow = 64 << 20

var goZstdPool sync.Pool // of *zstd.Decoder

// decodeZstd decodes the frames of src into dst with a streaming decoder,
// as Arrow's codec would with DecodeAll but never past len(dst): a frame
// that does not state its size may still decode to far more than its
// page (a block of one repeated byte is 128 KB from 4 bytes). Frames
// shorter than the page give the bytes they hold, as Arrow's codec does;
// longer ones, and corrupt ones, panic.
func decodeZstd(dst, src []byte) []byte {
	d, _ := goZstdPool.Get().(*zstd.Decoder)
	if d == nil {
		var err error
		d, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(maxZstdWindow))
		if err != nil {
			panic(err)
		}
	}
	if err := d.Reset(bytes.NewReader(src)); err != nil {
		d.Close()
		panic(err)
	}
	n := 0
	for n < len(dst) {
		k, err := d.Read(dst[n:])
		n += k
		if err == io.EOF { // the frames end before the page: what they hold
			goZstdPool.Put(d)
			return dst[:n]
		}
		if err != nil {
			d.Close()
			panic(err)
		}
	}
	var one [1]byte
	if k, err := d.Read(one[:]); k > 0 || err != io.EOF {
		d.Close()
		if err != nil && err != io.EOF {
			panic(err)
		}
		panic(fmt.Errorf("zstd frames longer than their page of %d bytes", len(dst)))
	}
	goZstdPool.Put(d)
	return dst
}

// snappyCodec: Arrow's Go codec (golang/snappy) allocates the length a
// block states, up to 4 GB, when it is more than len(dst); a block stated
// longer than its page is corrupt, and panics as Arrow's codec does.
type snappyCodec struct{ compress.Codec }

func (c snappyCodec) Decode(dst, src []byte) []byte {
	if m, k := binary.Uvarint(src); k > 0 && m > uint64(len(dst)) {
		panic(fmt.Errorf("snappy block of %d bytes in a page of %d", m, len(dst)))
	}
	return c.Codec.Decode(dst, src)
}

// ZstdContentSize returns the content size in the header of the zstd frame
// that begins b; ok is false if b does not begin with a frame header that
// states it (RFC 8878, section 3.1.1.1).
func ZstdContentSize(b []byte) (uint64, bool) {
	if len(b) < 5 || binary.LittleEndian.Uint32(b) != 0xFD2FB528 {
		return 0, false
	}
	fhd := b[4]
	single := fhd&0x20 != 0
	if fhd&0x08 != 0 { // reserved bit
		return 0, false
	}
	pos := 5
	if !single {
		pos++ // window descriptor
	}
	pos += [4]int{0, 1, 2, 4}[fhd&3] // dictionary id
	var n int
	switch fhd >> 6 {
	case 0:
		if !single {
			return 0, false // size not stated
		}
		n = 1
	case 1:
		n = 2
	case 2:
		n = 4
	case 3:
		n = 8
	}
	if len(b) < pos+n {
		return 0, false
	}
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[pos+i])
	}
	if n == 2 {
		v += 256
	}
	return v, true
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
