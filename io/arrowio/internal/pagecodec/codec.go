package pagecodec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/golang/snappy"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// Codec returns the decoder of id's pages: this package's for gzip, zstd,
// brotli and snappy, Arrow's (compress.GetCodec) for the others. Decode
// keeps Arrow's contract: the decoded block is returned in dst if it fits
// (pate's readers size dst to the page's stated length), and corrupt
// input panics. Encoding is Arrow's.
func Codec(id compress.Compression) (compress.Codec, error) {
	orig, err := compress.GetCodec(id)
	if err != nil {
		return nil, err
	}
	switch id {
	case compress.Codecs.Gzip:
		return gzipCodec{orig}, nil
	case compress.Codecs.Zstd:
		return zstdCodec{orig}, nil
	case compress.Codecs.Brotli:
		return brotliCodec{orig}, nil
	case compress.Codecs.Snappy:
		return snappyCodec{orig}, nil
	}
	return orig, nil
}

// byteReaders are the bytes.Readers the block decoders read a page from.
var byteReaders = sync.Pool{New: func() any { return new(bytes.Reader) }}

// gzipCodec: Arrow's Go codec fills dst with gzip members (and panics if
// they are fewer bytes); Parquet writers in C++ may also write a zlib
// stream, which Arrow C++ reads (it lets zlib detect the header), so this
// codec reads one too, filling dst as for gzip.
type gzipCodec struct{ compress.Codec }

var gzipReaders sync.Pool // of *gzip.Reader

func (c gzipCodec) Decode(dst, src []byte) []byte {
	if len(dst) == 0 {
		return c.Codec.Decode(dst, src)
	}
	if isZlib(src) {
		return decodeZlib(dst, src)
	}
	br := byteReaders.Get().(*bytes.Reader)
	br.Reset(src)
	defer func() {
		br.Reset(nil)
		byteReaders.Put(br)
	}()
	z, _ := gzipReaders.Get().(*gzip.Reader)
	var err error
	if z == nil {
		z, err = gzip.NewReader(br)
	} else {
		err = z.Reset(br)
	}
	if err != nil {
		panic(err)
	}
	if _, err := io.ReadFull(z, dst); err != nil {
		panic(err)
	}
	gzipReaders.Put(z)
	return dst
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

var zlibReaders sync.Pool // of io.ReadCloser (zlib.Resetter)

// decodeZlib fills dst from the zlib stream src and panics, as Arrow's
// codecs do, if it cannot, or if the stream is longer or fails its
// checksum (read at the stream's end).
func decodeZlib(dst, src []byte) []byte {
	br := byteReaders.Get().(*bytes.Reader)
	br.Reset(src)
	defer func() {
		br.Reset(nil)
		byteReaders.Put(br)
	}()
	r, _ := zlibReaders.Get().(io.ReadCloser)
	var err error
	if r == nil {
		r, err = zlib.NewReader(br)
	} else {
		err = r.(zlib.Resetter).Reset(br, nil)
	}
	if err != nil {
		panic(err)
	}
	if _, err := io.ReadFull(r, dst); err != nil {
		panic(err)
	}
	var one [1]byte
	switch k, err := r.Read(one[:]); {
	case k > 0:
		panic(errors.New("zlib page longer than its stated length"))
	case err != io.EOF:
		panic(fmt.Errorf("zlib page: %w", err))
	}
	zlibReaders.Put(r)
	return dst
}

// zstdCodec: Arrow's Go codec decodes every frame, appending to dst[:0]
// (in place while they fit in cap(dst)). It sizes its output by a frame's
// stated content size; a frame stated larger than the page (len(dst):
// the Parquet readers size dst to the page's stated length) is corrupt,
// and panics as Arrow's codecs do on corrupt input. Frames that do not
// state their size are never decoded past len(dst) either (a block of one
// repeated byte is 128 KB from 4 bytes): longer ones panic; shorter ones
// give the bytes they hold, as Arrow's codec does.
type zstdCodec struct{ compress.Codec }

// maxZstdWindow bounds the window of a zstd frame a page decoder takes
// (Parquet writers use a few MB at most).
const maxZstdWindow = 64 << 20

var zstdDecoders sync.Pool // of *zstd.Decoder

func (c zstdCodec) Decode(dst, src []byte) []byte {
	if m, ok := ZstdContentSize(src); ok && m > uint64(len(dst)) {
		panic(fmt.Errorf("zstd frame of %d bytes in a page of %d", m, len(dst)))
	}
	d, _ := zstdDecoders.Get().(*zstd.Decoder)
	if d == nil {
		var err error
		// DecodeAll on the caller's goroutine, never past cap(dst).
		d, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxZstdWindow),
			zstd.WithDecodeAllCapLimit(true))
		if err != nil {
			panic(err)
		}
	}
	into := dst[:0:len(dst)]
	if len(dst) == 0 {
		// A page of 0 bytes: a cap of 0 would not bound DecodeAll, so
		// decode into one byte and refuse any output (Arrow's codec,
		// used here before, decoded a frame of any length).
		into = make([]byte, 0, 1)
	}
	out, err := d.DecodeAll(src, into)
	zstdDecoders.Put(d)
	if err == nil && len(dst) == 0 && len(out) > 0 {
		err = zstd.ErrDecoderSizeExceeded
	}
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		panic(fmt.Errorf("zstd frames longer than their page of %d bytes", len(dst)))
	}
	if err != nil {
		panic(err)
	}
	if len(dst) == 0 {
		return dst
	}
	return out
}

// snappyCodec: Arrow's Go codec (golang/snappy) allocates the length a
// block states, up to 4 GB, when it is more than len(dst); a block stated
// longer than its page is corrupt, and panics as Arrow's codec does.
type snappyCodec struct{ compress.Codec }

func (c snappyCodec) Decode(dst, src []byte) []byte {
	if m, k := binary.Uvarint(src); k > 0 && m > uint64(len(dst)) {
		panic(fmt.Errorf("snappy block of %d bytes in a page of %d", m, len(dst)))
	}
	out, err := snappy.Decode(dst, src)
	if err != nil {
		panic(err)
	}
	return out
}

// brotliCodec: Arrow's Go codec fills at most len(dst) bytes and returns
// what it got, and panics on a corrupt or truncated stream; so does this
// one, with a pooled reader.
type brotliCodec struct{ compress.Codec }

var brotliReaders sync.Pool // of *brotli.Reader

func (c brotliCodec) Decode(dst, src []byte) []byte {
	if len(dst) == 0 {
		return c.Codec.Decode(dst, src)
	}
	br := byteReaders.Get().(*bytes.Reader)
	br.Reset(src)
	defer func() {
		br.Reset(nil)
		byteReaders.Put(br)
	}()
	r, _ := brotliReaders.Get().(*brotli.Reader)
	if r == nil {
		r = brotli.NewReader(br)
	} else if err := r.Reset(br); err != nil {
		panic(err)
	}
	// Arrow's loop, read for read: it stops at a read of nothing, which
	// with dst full is a read into an empty slice that still reports a
	// truncated or corrupt stream.
	n, k := 0, -1
	var err error
	for k != 0 && err == nil {
		k, err = r.Read(dst[n:])
		n += k
	}
	if err != nil && err != io.EOF {
		panic(err)
	}
	brotliReaders.Put(r)
	return dst[:n]
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
