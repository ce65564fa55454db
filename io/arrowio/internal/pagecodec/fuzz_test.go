package pagecodec

import (
	"bytes"
	"io"
	"testing"

	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// The page decoders read untrusted bytes (any Parquet file). Each fuzz
// target feeds arbitrary input and an arbitrary page length to one, in a
// buffer with guard bytes after it, and checks that it panics or returns
// at most the page, writes nothing past it, and returns what a fresh
// decoder gives (the pooled decoders keep nothing from earlier, corrupt
// input) and, for gzip and brotli, what Arrow's codec gives.

const guard = 64

// guarded returns a dst of n bytes followed, in the same allocation, by
// guard bytes of a known value, and a check of them.
func guarded(t *testing.T, n int) ([]byte, func()) {
	buf := make([]byte, n+guard)
	for i := n; i < len(buf); i++ {
		buf[i] = 0xA5
	}
	return buf[:n:n], func() {
		for i := n; i < len(buf); i++ {
			if buf[i] != 0xA5 {
				t.Fatalf("decoder wrote past the page, at %d", i-n)
			}
		}
	}
}

// seedPages adds valid pages, made from the fixture by encode, and a few
// damaged copies, to f's corpus.
func seedPages(f *testing.F, encode func([]byte) []byte) {
	page := readFixture(f, "page.bin")
	for _, p := range [][]byte{page[:100], page[:4096], []byte("pate pate pate pate"), {}} {
		src := encode(p)
		f.Add(src, uint16(len(p)))
		if len(src) > 8 {
			f.Add(src[:len(src)-4], uint16(len(p)))
			f.Add(flipAt(src, len(src)/2), uint16(len(p)))
			f.Add(append(bytes.Clone(src), src...), uint16(2*len(p)))
		}
	}
}

func flipAt(b []byte, i int) []byte {
	b = bytes.Clone(b)
	b[i] ^= 0x55
	return b
}

// decodeGuarded decodes src with c into a guarded page of n bytes; it
// returns the decoded bytes (a copy), or the panic.
func decodeGuarded(t *testing.T, c compress.Codec, src []byte, n int) (out []byte, panicked any) {
	dst, check := guarded(t, n)
	defer func() {
		if panicked = recover(); panicked == nil {
			check()
		}
	}()
	out = c.Decode(dst, src)
	if len(out) > n {
		t.Fatalf("decoded %d bytes into a page of %d", len(out), n)
	}
	return bytes.Clone(out), nil
}

func FuzzGzip(f *testing.F) {
	gz := arrowCodec(f, compress.Codecs.Gzip)
	c := pageCodec(f, compress.Codecs.Gzip)
	seedPages(f, func(p []byte) []byte { return gz.Encode(nil, p) })
	seedPages(f, func(p []byte) []byte { return zlibStream(f, p) })
	f.Fuzz(func(t *testing.T, src []byte, size uint16) {
		n := int(size)
		got, p := decodeGuarded(t, c, src, n)
		if n == 0 {
			return // Arrow's codec's, unguarded
		}
		// Arrow's contract: the first n bytes, whatever follows them.
		zl := isZlib(src)
		want, err := goInflate(src, zl, n)
		if p == nil && (len(want) < n || !bytes.Equal(want[:n], got)) {
			t.Fatalf("decoded %d bytes, a fresh reader %d (%v)", len(got), len(want), err)
		}
		if p == nil && zl && (len(want) > n || err != nil) {
			t.Fatalf("a zlib stream of more than %d bytes, or corrupt past them, decoded (%v)", n, err)
		}
		if !zl {
			if a, ap := decodeGuarded(t, gz, src, n); (ap == nil) != (p == nil) || !bytes.Equal(a, got) {
				t.Fatalf("decoded %d bytes (panic %v), Arrow's codec %d (panic %v)", len(got), p, len(a), ap)
			}
		}
	})
}

// goInflate decodes src, a zlib stream or gzip members, with fresh
// readers, reading at most one byte more than n.
func goInflate(src []byte, zl bool, n int) ([]byte, error) {
	var r io.Reader
	var err error
	if zl {
		r, err = zlib.NewReader(bytes.NewReader(src))
	} else {
		r, err = gzip.NewReader(bytes.NewReader(src))
	}
	if err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(r, int64(n)+1))
}

func FuzzZstd(f *testing.F) {
	zs := arrowCodec(f, compress.Codecs.Zstd)
	c := pageCodec(f, compress.Codecs.Zstd)
	seedPages(f, func(p []byte) []byte { return zs.Encode(nil, p) })
	for _, name := range []string{"page.bin.zst", "page.nocheck.zst"} {
		f.Add(readFixture(f, name), uint16(12288))
	}
	ref, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<20))
	if err != nil {
		f.Fatal(err)
	}
	defer ref.Close()
	f.Fuzz(func(t *testing.T, src []byte, size uint16) {
		n := int(size)
		got, p := decodeGuarded(t, c, src, n)
		if p != nil || n == 0 {
			return
		}
		want, err := ref.DecodeAll(src, nil)
		if err != nil {
			// A frame whose window is larger than the fresh decoder's
			// memory limit (the page decoder's is 64 MB).
			return
		}
		if !bytes.Equal(want, got) {
			t.Fatalf("decoded %d bytes, a fresh decoder %d", len(got), len(want))
		}
	})
}

func FuzzBrotli(f *testing.F) {
	br := arrowCodec(f, compress.Codecs.Brotli)
	c := pageCodec(f, compress.Codecs.Brotli)
	seedPages(f, func(p []byte) []byte { return br.Encode(nil, p) })
	f.Fuzz(func(t *testing.T, src []byte, size uint16) {
		n := int(size)
		got, p := decodeGuarded(t, c, src, n)
		if n == 0 {
			return
		}
		if a, ap := decodeGuarded(t, br, src, n); (ap == nil) != (p == nil) || !bytes.Equal(a, got) {
			t.Fatalf("decoded %d bytes (panic %v), Arrow's codec %d (panic %v)", len(got), p, len(a), ap)
		}
	})
}

func FuzzSnappy(f *testing.F) {
	sn := arrowCodec(f, compress.Codecs.Snappy)
	c := pageCodec(f, compress.Codecs.Snappy)
	seedPages(f, func(p []byte) []byte { return sn.Encode(nil, p) })
	f.Fuzz(func(t *testing.T, src []byte, size uint16) {
		n := int(size)
		got, p := decodeGuarded(t, c, src, n)
		if p != nil {
			return // refused, as a block stated longer than its page is
		}
		if a, ap := decodeGuarded(t, sn, src, n); ap != nil || !bytes.Equal(a, got) {
			t.Fatalf("decoded %d bytes, Arrow's codec %d (panic %v)", len(got), len(a), ap)
		}
	})
}
