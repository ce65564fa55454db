package fastcodec

import (
	"bytes"
	"io"
	"testing"

	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// The C decoders read untrusted bytes (any Parquet file). Each fuzz
// target feeds arbitrary input and an arbitrary page length to one, in a
// buffer with guard bytes after it, and checks that it writes nothing past
// the page and decodes nothing the Go decoder would not decode to the
// same bytes; the wrapped codec then panics or returns, never crashes.

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

// recovering runs f, swallowing a panic (Arrow's codecs panic on corrupt
// pages; a fault in C code would not be recovered and ends the fuzzer).
func recovering(f func()) {
	defer func() { _ = recover() }()
	f()
}

func FuzzGzip(f *testing.F) {
	gz := arrowCodec(f, compress.Codecs.Gzip)
	seedPages(f, func(p []byte) []byte { return gz.Encode(nil, p) })
	seedPages(f, func(p []byte) []byte { return zlibStream(f, p) })
	f.Fuzz(func(t *testing.T, src []byte, size uint16) {
		n := int(size)
		dst, check := guarded(t, n)
		zl := isZlib(src)
		var ok bool
		if zl {
			ok = Zlib(dst, src)
		} else {
			ok = Gzip(dst, src)
		}
		check()
		if ok {
			want, err := goInflate(src, zl, n)
			if err != nil || !bytes.Equal(want, dst) {
				t.Fatalf("C decoded %d bytes, Go %d (%v)", n, len(want), err)
			}
		}
		recovering(func() {
			d2, check2 := guarded(t, n)
			if out := Wrap(compress.Codecs.Gzip, gz).Decode(d2, src); len(out) > n {
				t.Fatalf("decoded %d bytes into a page of %d", len(out), n)
			}
			check2()
		})
	})
}

// goInflate decodes src, a zlib stream or gzip members, with the Go
// decoders, reading at most one byte more than n.
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
		dst, check := guarded(t, n)
		k, ok := Zstd(dst, src)
		check()
		if !ok {
			return
		}
		want, err := ref.DecodeAll(src, nil)
		if err != nil {
			// libzstd, the format's reference decoder (and the one
			// DuckDB, Polars and Arrow C++ use), accepts some frames
			// the Go decoder refuses: frames that claim a window far
			// larger than their content (the Go decoder's memory
			// limit; the C decoder writes into the page and allocates
			// no window), and damaged frames without a checksum whose
			// blocks still decode (testdata/fuzz/FuzzZstd).
			return
		}
		if !bytes.Equal(want, dst[:k]) {
			t.Fatalf("C decoded %d bytes, Go %d (%v)", k, len(want), err)
		}
	})
}

func FuzzBrotli(f *testing.F) {
	br := arrowCodec(f, compress.Codecs.Brotli)
	seedPages(f, func(p []byte) []byte { return br.Encode(nil, p) })
	f.Fuzz(func(t *testing.T, src []byte, size uint16) {
		n := int(size)
		dst, check := guarded(t, n)
		k, ok := Brotli(dst, src)
		check()
		if ok {
			want, err := io.ReadAll(io.LimitReader(br.NewReader(bytes.NewReader(src)), int64(n)+1))
			if err != nil || !bytes.Equal(want, dst[:k]) {
				t.Fatalf("C decoded %d bytes, Go %d (%v)", k, len(want), err)
			}
		}
		recovering(func() {
			d2, check2 := guarded(t, n)
			if out := Wrap(compress.Codecs.Brotli, br).Decode(d2, src); len(out) > n {
				t.Fatalf("decoded %d bytes into a page of %d", len(out), n)
			}
			check2()
		})
	})
}
