package pagecodec

import (
	"bufio"
	"errors"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// MaxStreamWindow is the largest window (8 MiB) a streamed zstd frame may
// ask for: the decoder keeps that much of the stream, and a frame asking
// for more fails to stream.
const MaxStreamWindow = 8 << 20

var errClosed = errors.New("pagecodec: read of a closed stream")

// streamDecoders keeps the streaming zstd decoders of finished pages: a
// decoder is some allocations and, once used, a window's buffer.
var streamDecoders sync.Pool // of *zstd.Decoder

// getStreamDecoder returns a pooled streaming zstd decoder reading r, or
// nil if r does not begin a zstd stream it can read.
func getStreamDecoder(r io.Reader) *zstd.Decoder {
	if d, ok := streamDecoders.Get().(*zstd.Decoder); ok {
		if d.Reset(r) == nil {
			return d
		}
		d.Close()
		return nil
	}
	// One goroutine (none of its own: the decoding happens in Read),
	// buffers sized to the frame, not to the largest window zstd allows.
	d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(MaxStreamWindow))
	if err != nil {
		return nil
	}
	return d
}

// putStreamDecoder gives d back to the pool, detached from its input.
func putStreamDecoder(d *zstd.Decoder) {
	if d.Reset(nil) == nil {
		streamDecoders.Put(d)
	} else {
		d.Close()
	}
}

// ZstdReader decodes a stream of zstd frames with a pooled decoder; Close
// gives the decoder back.
type ZstdReader struct{ d *zstd.Decoder }

// NewZstdReader returns a reader of the zstd frames r holds; ok is false
// if no decoder could be set up on r.
func NewZstdReader(r io.Reader) (*ZstdReader, bool) {
	d := getStreamDecoder(r)
	if d == nil {
		return nil, false
	}
	return &ZstdReader{d}, true
}

func (z *ZstdReader) Read(p []byte) (int, error) {
	if z.d == nil {
		return 0, errClosed
	}
	return z.d.Read(p)
}

// Close gives the decoder back (to a pool); the reader is done.
func (z *ZstdReader) Close() error {
	if z.d != nil {
		putStreamDecoder(z.d)
		z.d = nil
	}
	return nil
}

// DecodeZstdInto decodes the zstd frames br holds into dst, which they
// must fill exactly, with a pooled streaming decoder. ok is false on a
// corrupt or truncated stream, or one that does not decode to len(dst)
// bytes; dst then holds anything.
func DecodeZstdInto(br *bufio.Reader, dst []byte) bool {
	if len(dst) == 0 {
		return false
	}
	d := getStreamDecoder(br)
	if d == nil {
		return false
	}
	defer putStreamDecoder(d)
	if _, err := io.ReadFull(d, dst); err != nil {
		return false
	}
	var one [1]byte
	k, err := d.Read(one[:])
	return k == 0 && err == io.EOF
}

var gzipStreams sync.Pool // of *gzip.Reader

// GzipReader inflates one gzip member with a pooled inflater; it stops at
// the member's end (Multistream off). Close gives the inflater back.
type GzipReader struct{ z *gzip.Reader }

// NewGzipReader returns a reader of the gzip member r holds; ok is false
// if r does not begin with a gzip header.
func NewGzipReader(r io.Reader) (*GzipReader, bool) {
	z, _ := gzipStreams.Get().(*gzip.Reader)
	var err error
	if z == nil {
		z, err = gzip.NewReader(r)
	} else {
		err = z.Reset(r)
	}
	if err != nil {
		return nil, false
	}
	z.Multistream(false)
	return &GzipReader{z}, true
}

func (g *GzipReader) Read(p []byte) (int, error) {
	if g.z == nil {
		return 0, errClosed
	}
	return g.z.Read(p)
}

// Close gives the inflater back (to a pool); the reader is done.
func (g *GzipReader) Close() error {
	if g.z != nil {
		gzipStreams.Put(g.z)
		g.z = nil
	}
	return nil
}
